package funding

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Block is a source's block: a return said the customer disputes the
// authorization (or the account is frozen), so debits are refused until
// the merchant attests that the customer authorized again.
type Block struct {
	Code      string    `json:"code"`   // the ACH return code, "R07", or "noc_unapplicable"
	Reason    string    `json:"reason"` // its meaning
	BlockedAt time.Time `json:"blocked_at"`
}

// UnblockEvery is how long after an unblock the next one is refused.
const UnblockEvery = 365 * 24 * time.Hour

// MaxAttestation is the longest attestation, in characters.
const MaxAttestation = 500

// Outcome is what a return, a block or a removal did to a source, for
// what it sets off beyond funding (package consequence): Removed when it
// removed the source now, Blocked with the block's code when it blocked
// it now; the zero Outcome when the source was left as it was.
type Outcome struct {
	Removed bool
	Blocked string
}

// ApplyReturnTx applies the return policy (achcode.SourceAction) to the
// source a return with code came back from, in the return's transaction
// tx: a removal with removed_reason "return_R03" and return_code on
// funding_source.removed, or a block with funding_source.blocked. A source
// removed, or blocked, already is left as it is.
func (s *Service) ApplyReturnTx(ctx context.Context, tx Store, scope tenant.Scope, id, code string) (Outcome, error) {
	action := achcode.SourceAction(code)
	if action == achcode.Keep {
		return Outcome{}, nil
	}
	src, err := tx.SourceForUpdate(ctx, scope, id)
	if err != nil {
		return Outcome{}, fmt.Errorf("lock source %s for return %s: %w", id, code, err)
	}
	// The account's history keeps the return even when the source is gone.
	if err := s.recordFact(ctx, tx, src, FactReturned, code); err != nil {
		return Outcome{}, fmt.Errorf("record return %s of source %s: %w", code, id, err)
	}
	if src.Removed {
		return Outcome{}, nil
	}
	src.Facts = withCode(src.Facts, code, s.now(ctx))
	if action == achcode.Remove {
		if _, err = s.remove(ctx, tx, src, code); err != nil {
			return Outcome{}, fmt.Errorf("remove source %s after return %s: %w", id, code, err)
		}
		return Outcome{Removed: true}, nil
	}
	if src.Block != nil {
		return Outcome{}, nil
	}
	src.Block = &Block{Code: code, Reason: achcode.Reason(code), BlockedAt: s.now(ctx).UTC()}
	if err := tx.SetBlock(ctx, src); err != nil {
		return Outcome{}, fmt.Errorf("block source %s after return %s: %w", id, code, err)
	}
	return Outcome{Blocked: code}, s.record(ctx, tx, src, event.FundingSourceBlocked, src.Status)
}

// UnblockInput is an unblock request.
type UnblockInput struct {
	// Attestation is the merchant's statement that the customer authorized
	// debits again, kept with the source.
	Attestation *string `json:"attestation"`
}

// Unblock lifts a source's block on the merchant's attestation and fires
// funding_source.unblocked; at most once per UnblockEvery per source (409
// unblock_limit). A source that is not blocked is 409 conflict. The
// source's mandates stay revoked: the next debit brings a new
// authorization.
func (s *Service) Unblock(ctx context.Context, scope tenant.Scope, id string, in UnblockInput, by audit.Actor) (Source, error) {
	if in.Attestation == nil || strings.TrimSpace(*in.Attestation) == "" {
		return Source{}, errs.Invalid("attestation", "attestation is required: state that the customer authorized debits again.")
	}
	att := strings.TrimSpace(*in.Attestation)
	if utf8.RuneCountInString(att) > MaxAttestation || strings.ContainsFunc(att, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return Source{}, errs.Invalid("attestation", "attestation must be at most 500 characters without control characters.")
	}
	var out Source
	err := s.store.WithTx(ctx, func(tx Store) error {
		src, err := s.liveSource(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		now := s.now(ctx).UTC()
		switch {
		case src.Block == nil:
			return errs.New(errs.Conflict, "This funding source is not blocked.")
		case src.UnblockedAt != nil && now.Sub(*src.UnblockedAt) < UnblockEvery:
			return &errs.Error{Code: errs.UnblockLimit,
				Message: "This funding source was unblocked less than 365 days ago; it can be unblocked once per 365 days."}
		}
		src.Block, src.UnblockedAt, src.Attestation = nil, &now, &att
		if err := tx.SetBlock(ctx, src); err != nil {
			return err
		}
		out = src
		if err := tx.RecordAudit(ctx, audit.In(scope, audit.FundingSourceUnblocked, by, map[string]string{"funding_source_id": src.ID})); err != nil {
			return err
		}
		return s.record(ctx, tx, src, event.FundingSourceUnblocked, src.Status)
	})
	return s.checked(ctx, out), err
}
