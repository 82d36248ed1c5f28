package funding

import (
	"context"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Keeping the account check with the source. Computing the check reads
// the account's history (an index range of account_facts, grouped); a
// source is read far more often than its account's history changes, so
// the answer is kept on the source and the history is read only when the
// kept answer may be wrong:
//
//   - A new fact about the account, for any merchant's customer, marks
//     the kept answer of every source of that account it can change (the
//     store does it in the fact's transaction, whoever writes the fact, so
//     no path can forget): a link marks none, since links count for no
//     one, and a payment marks only other merchants' sources, since a
//     merchant's own customers never count for it. A creation of an
//     account with no history keeps its answer ("unknown") from the start;
//     one with a history keeps none, and its first read computes it.
//   - Time: a kept answer carries when it expires, the moment the first
//     fact it counted leaves its window (checkExpiry). A list reads the
//     history with its sources (one statement) once that moment has
//     passed by the database's clock; a source read alone comes without
//     it, and current reads it, one round trip more, when the kept answer
//     does not hold by the service's clock.
//
// A read that computes the check keeps it (StoreAccountCheck) unless the
// account's history was marked again since the read, which the source's
// check sequence tells; then the next read computes it again. Keeping is
// best effort: an answer not kept is computed again by the next read. A
// kept answer is as true at any moment before it expires as when it was
// computed, so its checked_at is the moment of the read.
//
// Marking writes the rows of other customers' sources of the account in
// the fact's transaction. Two transactions recording facts about one
// account from two sources at once can wait for each other's rows;
// PostgreSQL then cancels one, as with any deadlock. An account has at
// most one live source, so this needs a late return, or the settlement of
// a payment that left before its source was removed, on a removed source
// at the same moment as a fact about the live one. A payment's own
// settlement never marks its own merchant's sources, so it does not wait
// for its own source's row.

// StoredCheck is a source's account check as the store keeps it.
type StoredCheck struct {
	// Check is the kept answer (its CheckedAt unset); nil when it must be
	// computed: never computed, or the account's history changed since.
	Check *AccountCheck
	// Expires is when Check stops holding (UTC); nil: no time changes it.
	Expires *time.Time
	// Seq counts the marks of the account's history changes on the
	// source; a computed answer is kept only under the Seq it was read with.
	Seq int64
	// FactsRead: the store read the account's history with the source
	// (Source.Facts), because the kept answer does not hold or a write
	// locked the source.
	FactsRead bool
}

// holds reports whether the kept answer is the check at now.
func (c StoredCheck) holds(now time.Time) bool {
	return c.Check != nil && (c.Expires == nil || now.Before(*c.Expires))
}

// checkExpiry is when the check Evaluate gives for f at now can change by
// time alone: the first moment a fact it counted leaves its window; nil
// when none will. It follows Evaluate's windows: a code counts for
// checkWindow, another merchant's customer's use for manyCustomersWindow.
func checkExpiry(f AccountFacts, now time.Time) *time.Time {
	var first *time.Time
	consider := func(at time.Time, window time.Duration) {
		end := at.Add(window)
		if !now.After(end) && (first == nil || end.Before(*first)) {
			first = &end
		}
	}
	for code, at := range f.Codes {
		if CodeReason(code) != "" {
			consider(at, checkWindow)
		}
	}
	for _, at := range f.OtherUses {
		consider(at, manyCustomersWindow)
	}
	if first != nil {
		// Evaluate counts a fact while now - at <= window, so the answer
		// changes just after the window's end.
		end := first.Add(time.Microsecond).UTC()
		first = &end
	}
	return first
}

// current returns src, as read for an answer, with its account check at
// the service's now: the kept answer while it holds; else computed from
// the history (read here when the store did not) and kept.
func (s *Service) current(ctx context.Context, src Source) (Source, error) {
	now := s.now(ctx)
	if !src.Stored.FactsRead && src.Stored.holds(now) {
		return s.checked(ctx, src), nil
	}
	if !src.Stored.FactsRead {
		facts, err := s.store.AccountFacts(ctx, src.Scope.Env, src.AccountFP, src.Scope.MerchantID, src.ID)
		if err != nil {
			return Source{}, fmt.Errorf("read the account facts of source %s: %w", src.ID, err)
		}
		src.Facts, src.Stored.FactsRead = facts, true
	}
	src = s.checked(ctx, src)
	// Best effort (see above): the answer is right whether or not it is kept.
	_ = s.store.StoreAccountCheck(ctx, src.Scope, src.ID, *src.AccountCheck, checkExpiry(src.Facts, now), src.Stored.Seq)
	return src, nil
}

// currentAll is current on each source of list.
func (s *Service) currentAll(ctx context.Context, list []Source) ([]Source, error) {
	for i := range list {
		var err error
		if list[i], err = s.current(ctx, list[i]); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// CheckResult is the result of source id's account check as GET
// /v2/funding-source/{id} answers it (Get): the rules that judge payments
// by it read this, never the kept answer, so a fact about the account
// that made the kept answer stale is seen by them as by the merchant.
func (s *Service) CheckResult(ctx context.Context, scope tenant.Scope, id string) (string, error) {
	src, err := s.Get(ctx, scope, id)
	if err != nil {
		return "", err
	}
	return src.AccountCheck.Result, nil
}
