package payment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// MandateType says how many debits a mandate authorizes.
type MandateType string

// Mandate types: a payment's mandate covers that one debit, a
// subscription's every debit of its schedule.
const (
	Single    MandateType = "single"
	Recurring MandateType = "recurring"
)

// Mandate states.
const (
	MandateActive  = "active"
	MandateRevoked = "revoked"
)

// Limits of an authorization's members, in characters.
const (
	MaxMandateText   = 10000
	MaxUserAgent     = 512
	MaxRevokeReason  = 200
	maxAcceptedAhead = 5 * time.Minute // clock skew allowed for accepted_at
)

// SandboxMandateText is the text of the mandate the sandbox creates for a
// debit that came without an authorization.
const SandboxMandateText = "Sandbox: created by fundsource for a debit that came without an authorization. Not evidence of a customer's consent."

// RevokedByRequest is the revoke_reason when the merchant gives none.
const RevokedByRequest = "requested"

// Mandate is a customer's authorization of debits from one funding source:
// the evidence an originating bank asks for (its text, when and from where
// it was accepted).
type Mandate struct {
	Scope        tenant.Scope `json:"-"`
	ID           string       `json:"mandate_id"`
	SourceID     string       `json:"funding_source_id"`
	CustomerID   string       `json:"user_id"`
	Type         MandateType  `json:"type"`
	SECCode      string       `json:"sec_code"` // WEB for a consumer, CCD for a business
	Status       string       `json:"status"`   // MandateActive or MandateRevoked
	AcceptedAt   time.Time    `json:"accepted_at"`
	IPAddress    *string      `json:"ip_address"` // null for the sandbox's own mandates
	UserAgent    *string      `json:"user_agent"`
	Text         string       `json:"text"`        // the authorization as the customer saw it
	TextSHA256   string       `json:"text_sha256"` // hex SHA-256 of Text's UTF-8 bytes
	RevokedAt    *time.Time   `json:"revoked_at"`
	RevokeReason *string      `json:"revoke_reason"`
	CreatedAt    time.Time    `json:"created_at"` // UTC
	// UsedAt is when a single mandate authorized its debit.
	UsedAt *time.Time `json:"-"`
}

// Authorization is the customer's consent as the merchant captured it,
// given inline with a debit or subscription.
type Authorization struct {
	AcceptedAt *string `json:"accepted_at"` // RFC 3339
	IPAddress  *string `json:"ip_address"`
	UserAgent  *string `json:"user_agent"`
	Text       *string `json:"text"`
}

// RevokeInput is a revocation request.
type RevokeInput struct {
	Reason *string `json:"revoke_reason"`
}

// authorize returns the mandate a subscription on src goes out under, in
// tx after src is share-locked: the one named by mandateID, a new one from
// auth, or in sandbox a new one of its own. A new mandate is stored and
// fires mandate.created.
func (s *Service) authorize(ctx context.Context, tx Store, scope tenant.Scope, sourceID string, src SourceInfo,
	typ MandateType, mandateID *string, auth *Authorization) (string, error) {
	if mandateID != nil {
		if auth != nil {
			return "", bothGiven()
		}
		return s.useMandate(ctx, tx, scope, sourceID, typ, *mandateID)
	}
	m, err := s.newMandate(ctx, scope, sourceID, typ, auth)
	if err != nil {
		return "", err
	}
	m.CustomerID, m.SECCode = src.CustomerID, EntrySEC(Debit, src.Business)
	if err := tx.InsertMandate(ctx, m); err != nil {
		return "", fmt.Errorf("insert mandate %s: %w", m.ID, err)
	}
	return m.ID, tx.RecordEvent(ctx, event.New(scope, event.MandateCreated, m, m.CreatedAt))
}

func bothGiven() error {
	return errs.Invalid("mandate_id", "Give either mandate_id or authorization, not both.")
}

// newMandate is the mandate of typ for a debit or subscription of sourceID
// from auth, or in sandbox without one the sandbox's own; in production
// auth is required. Its customer and SEC code are its source's, which the
// caller fills in.
func (s *Service) newMandate(ctx context.Context, scope tenant.Scope, sourceID string, typ MandateType, auth *Authorization) (Mandate, error) {
	if auth == nil && scope.Env.Live() {
		return Mandate{}, &errs.Error{Code: errs.AuthorizationRequired, Param: "authorization",
			Message: "A debit or subscription needs the customer's authorization: give mandate_id or authorization {accepted_at, ip_address, user_agent, text}."}
	}
	now := s.now(ctx).UTC()
	m := Mandate{Scope: scope, ID: ids.New(ids.Mandate), SourceID: sourceID, Type: typ,
		Status: MandateActive, AcceptedAt: now, Text: SandboxMandateText, CreatedAt: now}
	if auth != nil {
		if err := s.evidence(&m, *auth, now); err != nil {
			return Mandate{}, err
		}
	}
	sum := sha256.Sum256([]byte(m.Text))
	m.TextSHA256 = hex.EncodeToString(sum[:])
	return m, nil
}

// evidence checks an authorization and copies it into m.
func (s *Service) evidence(m *Mandate, a Authorization, now time.Time) error {
	if a.Text == nil || strings.TrimSpace(*a.Text) == "" {
		return errs.Invalid("authorization.text", "authorization.text is required: the authorization exactly as the customer accepted it.")
	}
	if utf8.RuneCountInString(*a.Text) > MaxMandateText {
		return errs.Invalid("authorization.text", "authorization.text must be at most 10000 characters.")
	}
	if a.AcceptedAt == nil {
		return errs.Invalid("authorization.accepted_at", "authorization.accepted_at is required, like 2026-11-02T15:04:05Z.")
	}
	at, err := time.Parse(time.RFC3339, *a.AcceptedAt)
	if err != nil || at.After(now.Add(maxAcceptedAhead)) {
		return errs.Invalid("authorization.accepted_at", "authorization.accepted_at must be an RFC 3339 time, like 2026-11-02T15:04:05Z, and not in the future.")
	}
	if a.IPAddress == nil && m.Scope.Env.Live() {
		return errs.Invalid("authorization.ip_address", "authorization.ip_address is required: the address the customer accepted from.")
	}
	if a.IPAddress != nil {
		ip, err := netip.ParseAddr(*a.IPAddress)
		if err != nil {
			return errs.Invalid("authorization.ip_address", "authorization.ip_address must be an IPv4 or IPv6 address.")
		}
		v := ip.String()
		m.IPAddress = &v
	}
	if a.UserAgent != nil {
		ua := strings.TrimSpace(*a.UserAgent)
		if utf8.RuneCountInString(ua) > MaxUserAgent || strings.ContainsFunc(ua, isControl) {
			return errs.Invalid("authorization.user_agent", "authorization.user_agent must be at most 512 characters without control characters.")
		}
		if ua != "" {
			m.UserAgent = &ua
		}
	}
	m.AcceptedAt, m.Text = at.UTC(), *a.Text
	return nil
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

// useMandate checks that the mandate named by a request may authorize a
// subscription of sourceID, as the statement that locks it decides
// (Store.MandateForUse), and keeps it locked until the transaction ends,
// so a revocation waits for this one.
func (s *Service) useMandate(ctx context.Context, tx Store, scope tenant.Scope, sourceID string, typ MandateType, id string) (string, error) {
	refusal, err := tx.MandateForUse(ctx, scope, id, sourceID, typ)
	if err == nil {
		err = mandateRefused(refusal)
	}
	if err != nil {
		return "", mandateRefusal(err)
	}
	return id, nil
}

// Refusals of a named mandate, as the statements that lock it decide them
// (DebitOutcome.Refusal, Store.MandateForUse).
const (
	RefusedMandateUnknown      = "mandate_unknown"
	RefusedMandateOtherSource  = "mandate_other_source"
	RefusedMandateRevoked      = "mandate_revoked"
	RefusedMandateNotRecurring = "mandate_not_recurring"
	RefusedMandateUsed         = "mandate_used"
)

// mandateRefused is the error of the named mandate's refusal named name;
// nil for "". The rule (a mandate authorizes a debit or subscription of
// its own source while active, a subscription only when recurring, and a
// single one only once) is decided where the mandate is locked, in SQL;
// mandateRefused decides nothing itself.
func mandateRefused(name string) error {
	switch name {
	case "":
		return nil
	case RefusedMandateUnknown:
		return mandateRefusal(errs.New(errs.NotFound, "not found"))
	case RefusedMandateOtherSource:
		return errs.Invalid("mandate_id", "This mandate authorizes debits from another funding source.")
	case RefusedMandateRevoked:
		return errs.Invalid("mandate_id", "This mandate was revoked; the customer must authorize again.")
	case RefusedMandateNotRecurring:
		return errs.Invalid("mandate_id", "A subscription needs a recurring mandate; this one authorizes a single debit.")
	case RefusedMandateUsed:
		return errs.Invalid("mandate_id", "This single-debit mandate has authorized a debit already.")
	}
	return fmt.Errorf("mandate refused for %q, which no error explains", name)
}

// mandateRefusal names an unknown mandate as such; other errors pass.
func mandateRefusal(err error) error {
	if errs.Is(err, errs.NotFound) {
		return &errs.Error{Code: errs.NotFound, Param: "mandate_id", Message: "No mandate with this mandate_id exists."}
	}
	return err
}

// GetMandate returns a mandate.
func (s *Service) GetMandate(ctx context.Context, scope tenant.Scope, id string) (Mandate, error) {
	m, err := s.store.Mandate(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Mandate{}, mandateNotFound()
	}
	return m, err
}

// ListMandates returns a page of mandates, newest first, of one source
// when sourceID is not "".
func (s *Service) ListMandates(ctx context.Context, scope tenant.Scope, sourceID string, p paging.Page) ([]Mandate, bool, error) {
	items, err := s.store.ListMandates(ctx, scope, sourceID, p)
	return paging.Result(items, err, p)
}

// Revoke revokes a mandate, fires mandate.revoked and cancels the active
// subscriptions it authorized and its debits not sent yet (cancel_reason
// mandate_revoked, see CancelUnsentTx). Revoking a revoked mandate answers
// it as it is.
func (s *Service) Revoke(ctx context.Context, scope tenant.Scope, id string, in RevokeInput, by audit.Actor) (Mandate, error) {
	reason := RevokedByRequest
	if in.Reason != nil {
		reason = strings.TrimSpace(*in.Reason)
		if reason == "" || utf8.RuneCountInString(reason) > MaxRevokeReason || strings.ContainsFunc(reason, isControl) {
			return Mandate{}, errs.Invalid("revoke_reason", "revoke_reason must be 1 to 200 characters without control characters.")
		}
	}
	var out Mandate
	err := s.store.WithTx(ctx, func(tx Store) error {
		m, err := tx.MandateForUpdate(ctx, scope, id)
		if errs.Is(err, errs.NotFound) {
			return mandateNotFound()
		}
		if err != nil {
			return fmt.Errorf("lock mandate %s: %w", id, err)
		}
		out = m
		if m.Status == MandateRevoked {
			return nil
		}
		if out, err = s.revoke(ctx, tx, m, reason); err != nil {
			return err
		}
		return tx.RecordAudit(ctx, audit.In(scope, audit.MandateRevoked, by, map[string]string{"mandate_id": m.ID, "funding_source_id": m.SourceID}))
	})
	return out, err
}

// RevokeForSourceTx revokes every active mandate of a source in the
// caller's transaction tx, with reason (an ACH return's, like
// "return_R07"), each as Revoke does, and cancels the source's other
// active subscriptions (mandate_revoked): a return that disputes the
// authorization ends every debit on its way.
func (s *Service) RevokeForSourceTx(ctx context.Context, tx Store, scope tenant.Scope, sourceID, reason string) error {
	ms, err := tx.ActiveMandatesOfSource(ctx, scope, sourceID)
	if err != nil {
		return fmt.Errorf("list active mandates of source %s: %w", sourceID, err)
	}
	for _, m := range ms {
		if _, err := s.revoke(ctx, tx, m, reason); err != nil {
			return err
		}
	}
	subs, err := tx.ActiveSubscriptionsOfSource(ctx, scope, sourceID)
	if err != nil {
		return fmt.Errorf("list active subscriptions of source %s: %w", sourceID, err)
	}
	for _, sub := range subs {
		if err := s.cancel(ctx, tx, &sub, CancelMandateRevoked); err != nil {
			return err
		}
	}
	return nil
}

// revoke revokes the locked active mandate m in tx, and ends what it
// authorized: its subscriptions, then its unsent debits. The debits come
// after the subscriptions because the scheduler holds a subscription's
// lock while it writes its debit: once the subscriptions are locked here,
// every debit of theirs has committed and is seen.
func (s *Service) revoke(ctx context.Context, tx Store, m Mandate, reason string) (Mandate, error) {
	now := s.now(ctx).UTC()
	m.Status, m.RevokedAt, m.RevokeReason = MandateRevoked, &now, &reason
	if err := tx.RevokeMandate(ctx, m); err != nil {
		return Mandate{}, fmt.Errorf("revoke mandate %s: %w", m.ID, err)
	}
	if err := tx.RecordEvent(ctx, event.New(m.Scope, event.MandateRevoked, m, now)); err != nil {
		return Mandate{}, fmt.Errorf("record mandate.revoked of %s: %w", m.ID, err)
	}
	subs, err := tx.ActiveSubscriptionsOfSource(ctx, m.Scope, m.SourceID)
	if err != nil {
		return Mandate{}, fmt.Errorf("list active subscriptions of source %s: %w", m.SourceID, err)
	}
	for _, sub := range subs {
		if sub.MandateID != nil && *sub.MandateID == m.ID {
			if err := s.cancel(ctx, tx, &sub, CancelMandateRevoked); err != nil {
				return Mandate{}, err
			}
		}
	}
	return m, s.CancelUnsentTx(ctx, tx, m.Scope, Unsent{MandateID: m.ID, DebitsOnly: true}, CancelMandateRevoked)
}

func mandateNotFound() error {
	return &errs.Error{Code: errs.NotFound, Message: "No mandate with this id exists."}
}
