package payment

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/sanctions"
)

// Sanctions screening of payments. A customer's names are screened when
// they are written (package customer); a payment of a customer in
// potential_match is held at creation (assess). Production entries are
// screened again as they are claimed for an ACH file (ReleaseTx), against
// the list loaded now, since the list changes under customers screened
// long ago: a new match marks the customer, fires
// customer.screening_match and holds the payment instead of sending it.
//
// An operator clears a potential match (ClearScreening): the customer is
// cleared of that entry, and its payments held for sanctions screening
// go back to pending (payment.released), since that was their only hold;
// a later match with another entry holds them again.

// ScreeningPotentialMatch is the customer screening status that holds
// its payments.
const ScreeningPotentialMatch = sanctions.PotentialMatch

// WithSanctions sets the list production entries are screened against as
// they leave; nil: none.
func (s *Service) WithSanctions(l *sanctions.List) *Service {
	s.sanctions = l
	return s
}

// screenedCustomer is the data of customer.screening_match fired here.
type screenedCustomer struct {
	ID        string              `json:"user_id"`
	Screening sanctions.Screening `json:"screening"`
}

// screenTx screens p's customer as p leaves (production): it reports
// whether p may leave, holding it (sanctions_screening) when not.
func (s *Service) screenTx(ctx context.Context, tx Store, p Payment) (bool, error) {
	if s.sanctions == nil || !p.Scope.Env.Live() {
		return true, nil
	}
	names, prev, err := tx.CustomerScreening(ctx, p.Scope, p.CustomerID)
	if err != nil {
		return false, fmt.Errorf("read the screening of customer %s: %w", p.CustomerID, err)
	}
	next := prev
	if prev.Status != sanctions.PotentialMatch {
		next = s.sanctions.Of(prev, names...)
	}
	if next.Status != sanctions.PotentialMatch {
		return true, nil
	}
	now := s.now(ctx).UTC()
	if prev.Status != sanctions.PotentialMatch {
		if err := tx.SetCustomerScreening(ctx, p.Scope, p.CustomerID, next); err != nil {
			return false, fmt.Errorf("store the screening of customer %s: %w", p.CustomerID, err)
		}
		c := screenedCustomer{ID: p.CustomerID, Screening: next}
		if err := tx.RecordEvent(ctx, event.New(p.Scope, event.CustomerScreeningMatch, c, now)); err != nil {
			return false, fmt.Errorf("record the screening match of customer %s: %w", p.CustomerID, err)
		}
	}
	_, err = s.hold(ctx, tx, p, verdict{reason: HoldSanctions})
	return false, err
}

// ScreenEntryTx screens, as an entry leaves (production), the receiver's
// name the entry carries: a source's own receiver name (a notification of
// change may have corrected it) can differ from the customer's, which
// screenTx screens. business says the receiver is a company. A customer
// already a potential match, or a name that is one (the customer is then
// marked potential_match, customer.screening_match), reports false: a
// payment p is held (sanctions_screening), and micro-deposits (p nil)
// wait until an operator clears the screening. This is the one place a
// micro-deposit's screening is decided.
func (s *Service) ScreenEntryTx(ctx context.Context, tx Store, scope tenant.Scope, customerID string, p *Payment, name string, business bool) (bool, error) {
	if s.sanctions == nil || !scope.Env.Live() {
		return true, nil
	}
	_, prev, err := tx.CustomerScreening(ctx, scope, customerID)
	if err != nil {
		return false, fmt.Errorf("screen the receiver of customer %s: %w", customerID, err)
	}
	if prev.Status != sanctions.PotentialMatch {
		if name == "" {
			return true, nil
		}
		n := sanctions.Written(name)
		if business {
			n = sanctions.Business(name)
		}
		next := s.sanctions.Of(prev, n)
		if next.Status != sanctions.PotentialMatch {
			return true, nil
		}
		if err := tx.SetCustomerScreening(ctx, scope, customerID, next); err != nil {
			return false, fmt.Errorf("store the screening of customer %s: %w", customerID, err)
		}
		c := screenedCustomer{ID: customerID, Screening: next}
		if err := tx.RecordEvent(ctx, event.New(scope, event.CustomerScreeningMatch, c, s.now(ctx).UTC())); err != nil {
			return false, fmt.Errorf("record the screening match of customer %s: %w", customerID, err)
		}
	}
	if p != nil {
		if _, err := s.hold(ctx, tx, *p, verdict{reason: HoldSanctions}); err != nil {
			return false, err
		}
	}
	return false, nil
}

// ClearScreening clears a customer's potential match after an operator's
// review (audited) and releases its payments held for sanctions
// screening. A customer not in potential_match is 409 conflict.
func (s *Service) ClearScreening(ctx context.Context, customerID, note string, by audit.Actor) (sanctions.Screening, []Payment, error) {
	note, err := ReviewNote(note)
	if err != nil {
		return sanctions.Screening{}, nil, err
	}
	if note == "" {
		return sanctions.Screening{}, nil, errs.Invalid("note", "Say why the match is cleared (--note).")
	}
	var out sanctions.Screening
	var freed []Payment
	err = s.store.WithTx(ctx, func(tx Store) error {
		scope, prev, err := tx.CustomerScreeningForUpdate(ctx, customerID)
		if errs.Is(err, errs.NotFound) {
			return &errs.Error{Code: errs.CustomerNotFound, Message: "No customer with this id exists."}
		}
		if err != nil {
			return fmt.Errorf("lock the screening of customer %s: %w", customerID, err)
		}
		if prev.Status != sanctions.PotentialMatch {
			return errs.Newf(errs.Conflict, "This customer's screening is %s; only a potential_match is cleared.", prev.Status)
		}
		now := s.now(ctx).UTC()
		out = prev
		out.Status, out.ClearedAt, out.Note = sanctions.Cleared, &now, &note
		if err := tx.SetCustomerScreening(ctx, scope, customerID, out); err != nil {
			return fmt.Errorf("clear the screening of customer %s: %w", customerID, err)
		}
		held, err := tx.HeldOfCustomer(ctx, scope, customerID, HoldSanctions)
		if err != nil {
			return fmt.Errorf("list payments of customer %s held for screening: %w", customerID, err)
		}
		for _, p := range held {
			p, err := s.releaseTx(ctx, tx, p, note)
			if err != nil {
				return err
			}
			freed = append(freed, p)
		}
		details := map[string]string{"user_id": customerID, "note": note}
		if prev.SDNEntry != nil {
			details["sdn_entry"] = prev.SDNEntry.Num
		}
		return tx.RecordAudit(ctx, audit.In(scope, AuditScreeningCleared, by, details))
	})
	return out, freed, err
}
