package funding

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// The code of an instant verification: CodePrefix and CodeLength
// characters of CodeAlphabet (no 0/O, 1/I: it is read off a statement).
const (
	CodePrefix   = "FS"
	CodeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	CodeLength   = 4
	// InstantCents is the amount of the instant credit.
	InstantCents = 1
	// railRetryAfter is the Retry-After, in seconds, of rail_unavailable.
	railRetryAfter = 30
)

// CodeExample is a code of the right form (CodePrefix and CodeLength
// characters of CodeAlphabet), the one every description of the code shows.
const CodeExample = CodePrefix + "7KQ2"

// CodeFormat describes the code's form to a person, from CodePrefix and
// CodeLength: "FS followed by four letters or digits". The API's error and
// the hosted page both say it so.
func CodeFormat() string {
	return CodePrefix + " followed by " + [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}[CodeLength] +
		" letters or digits"
}

// WithRails sets the instant rails: reach says which rail a bank receives
// on, and rails[env] sends credits for that environment (none: instant is
// unavailable there and "auto" falls back).
func (s *Service) WithRails(reach Reach, rails map[tenant.Environment]Rail) *Service {
	s.reach, s.rails = reach, rails
	return s
}

// newCode draws a code from crypto/rand, uniformly over the alphabet (its
// 32 letters divide 256).
func newCode() string {
	b := make([]byte, CodeLength)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	for i := range b {
		b[i] = CodeAlphabet[int(b[i])%len(CodeAlphabet)]
	}
	return CodePrefix + string(b)
}

// NormalizeCode is a typed code as stored: spaces dropped, upper case, with
// the FS prefix (added when the customer left it out).
func NormalizeCode(typed string) string {
	c := strings.ToUpper(strings.Join(strings.Fields(typed), ""))
	if len(c) == CodeLength {
		c = CodePrefix + c
	}
	return c
}

// ValidCode reports whether a normalized code has the form of one.
func ValidCode(c string) bool {
	if len(c) != len(CodePrefix)+CodeLength || !strings.HasPrefix(c, CodePrefix) {
		return false
	}
	for _, r := range c[len(CodePrefix):] {
		if !strings.ContainsRune(CodeAlphabet, r) {
			return false
		}
	}
	return true
}

// openCode opens an instant verification's code.
func (s *Service) openCode(m MicroDeposit) (string, error) {
	plain, err := s.vault.OpenPadded(m.Amounts.KeyID, m.Amounts.Data, amountsAAD(m.SourceID, m.Seq))
	if err != nil {
		return "", fmt.Errorf("open the code of %s: %w", m.SourceID, err)
	}
	return string(plain), nil
}

// pendingEvent is funding_source.verification_pending about src, whose
// data also names the verification's method.
func (s *Service) pendingEvent(ctx context.Context, src Source) event.Event {
	data := struct {
		Source
		Status Status `json:"status"`
		Method string `json:"verification_method"`
	}{src, PendingVerified, src.Verification.Method}
	return event.New(src.Scope, event.FundingSourceVerificationPending, data, s.now(ctx))
}

// SandboxProof is what a sandbox customer would read on the statement for
// the latest verification of a source: its amounts, or its code.
type SandboxProof struct {
	Amounts *[2]int // cents; micro-deposits only
	Code    string  // instant only
}

// SandboxVerification returns the proof and the state of a sandbox
// source's latest verification.
func (s *Service) SandboxVerification(ctx context.Context, scope tenant.Scope, id string) (SandboxProof, *Verification, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return SandboxProof{}, nil, err
	}
	if _, err := s.Get(ctx, scope, id); err != nil {
		return SandboxProof{}, nil, err
	}
	m, err := s.store.LatestMicroDeposit(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return SandboxProof{}, nil, errs.New(errs.VerificationNotInitiated, "No verification was initiated on this funding source yet.")
	}
	if err != nil {
		return SandboxProof{}, nil, fmt.Errorf("read the latest verification of source %s: %w", id, err)
	}
	if m.Method == MethodInstant {
		code, err := s.openCode(m)
		return SandboxProof{Code: code}, m.Verification(), err
	}
	a, err := s.openAmounts(m)
	return SandboxProof{Amounts: &a}, m.Verification(), err
}
