package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/core/testclock"
)

// Input is a payment request.
type Input struct {
	SourceID    string          `json:"funding_source_id"`
	Amount      json.RawMessage `json:"amount"`
	Direction   Direction       `json:"direction"`
	Description *string         `json:"description"`
	// EntryDescription names the batch's company entry description (entry.go).
	EntryDescription *string `json:"entry_description"`
	// Purpose is what the payment is for (purpose.go); nil: the
	// originator's default_purpose.
	Purpose *string `json:"purpose"`
	// A debit's authorization: an existing mandate, or the customer's
	// consent from which a single mandate is created.
	MandateID     *string        `json:"mandate_id"`
	Authorization *Authorization `json:"authorization"`
	// SameDay asks for Same Day ACH (finality.go).
	SameDay bool `json:"same_day"`
	// Method is standard, same_day, instant or auto (instant.go); nil:
	// standard, or same_day by SameDay.
	Method *string `json:"method"`
	// Metadata is the merchant's own (metadata package).
	Metadata metadata.Metadata `json:"metadata"`
}

// Create records a pending payment. A debit needs a Verified source (403
// debit_not_allowed otherwise) and a mandate (see authorize); credits go to
// any live source and take none.
func (s *Service) Create(ctx context.Context, scope tenant.Scope, in Input) (Payment, error) {
	return s.createWith(ctx, scope, in, Ledger{})
}

// Ledger is what a new payment is stored with beside what its creating
// statement writes: its metadata and, for a refund, the debit it pays
// back. They are written by a statement of their own in the creation's
// transaction, so the creating statements stay what they are.
type Ledger struct {
	Metadata     metadata.Metadata
	RefundOf     *string
	RefundReason *string
}

// createWith is Create of a payment stored with l (in's metadata is
// checked into it).
func (s *Service) createWith(ctx context.Context, scope tenant.Scope, in Input, l Ledger) (Payment, error) {
	meta, err := metadata.New(in.Metadata)
	if err != nil {
		return Payment{}, err
	}
	l.Metadata = meta
	if in.SourceID == "" {
		return Payment{}, errs.Invalid("funding_source_id", "funding_source_id is required")
	}
	if in.Direction != Debit && in.Direction != Credit {
		return Payment{}, errs.Invalid("direction", `direction must be "debit" or "credit"`)
	}
	cents, err := s.amount(in.Amount)
	if err != nil {
		return Payment{}, err
	}
	desc, err := description(in.Description)
	if err != nil {
		return Payment{}, err
	}
	if in.EntryDescription, err = entryDescription(in.EntryDescription); err != nil {
		return Payment{}, err
	}
	purpose, err := ParsePurpose("purpose", in.Purpose)
	if err != nil {
		return Payment{}, err
	}
	method, err := creditMethod(&in)
	if err != nil {
		return Payment{}, err
	}
	if in.SameDay {
		if err := s.sameDayAllowed(ctx, scope, cents); err != nil {
			return Payment{}, err
		}
	}
	// The risk rules read what they need first (hold.go); a payment they
	// hold is created and held in one transaction, any other the usual way.
	v, facts, err := s.assess(ctx, s.store, scope, in.SourceID, in.Direction, cents)
	if err != nil {
		return Payment{}, err
	}
	purpose = purposeOr(purpose, facts.DefaultPurpose)
	// A description that fits no entry of this purpose is refused before
	// the source is read.
	fits := descriptionFits(in.EntryDescription, in.Direction, purpose)
	if fits != nil && len(fits) == 0 {
		return Payment{}, entryDescriptionRefusal(in.EntryDescription, in.Direction, purpose, EntrySEC(in.Direction, false))
	}
	n := newPayment{in: in, cents: cents, desc: desc, purpose: purpose, fits: fits, method: method, ledger: l}
	if method == MethodInstant || method == MethodAuto {
		if in.MandateID != nil || in.Authorization != nil {
			return Payment{}, errs.Invalid("mandate_id", "A credit takes no mandate_id or authorization; only debits are authorized by the customer.")
		}
		if err := s.route(ctx, scope, &n); err != nil {
			return Payment{}, err
		}
		if n.rail != RailACH {
			p, err := s.createInstant(ctx, scope, n, v)
			if !errors.Is(err, errInstantRoomTaken) {
				return p, err
			}
			s.fallBack(ctx, scope, &n, FallbackOverRailLimit)
		}
	}
	if v.reason == "" && n.fallback == "" && !l.kept() {
		return s.create(ctx, scope, n)
	}
	var out Payment
	err = s.store.WithTx(ctx, func(tx Store) error {
		p, err := s.On(tx).create(ctx, scope, n)
		if err != nil {
			return err
		}
		if n.fallback != "" {
			if err := tx.SetPaymentRoute(ctx, p); err != nil {
				return fmt.Errorf("store the route of %s: %w", p.ID, err)
			}
		}
		if p, err = s.keepLedgerTx(ctx, tx, p, l); err != nil {
			return err
		}
		if v.reason != "" {
			p, err = s.hold(ctx, tx, p, v)
		}
		out = p
		return err
	})
	return out, err
}

// newPayment is a validated payment request: its amount in cents, its
// description, its purpose (the originator's default filled in) and the
// SEC codes its entry description fits (descriptionFits).
type newPayment struct {
	in      Input
	cents   int64
	desc    *string
	purpose Purpose
	fits    []string
	// method is the request's (creditMethod); rail and fallback where
	// route sent an instant or auto credit.
	method, rail, fallback string
	// ledger is what the payment keeps besides (metadata, a refund's link).
	ledger Ledger
}

// kept says whether l has anything to store with a new payment.
func (l Ledger) kept() bool { return l.Metadata != nil || l.RefundOf != nil }

// keepLedgerTx stores l with the new payment p in tx, when it has
// anything to store, and returns p with it.
func (s *Service) keepLedgerTx(ctx context.Context, tx Store, p Payment, l Ledger) (Payment, error) {
	if !l.kept() {
		return p, nil
	}
	if err := tx.SetPaymentLedger(ctx, p.Scope, p.ID, l); err != nil {
		return Payment{}, fmt.Errorf("store the metadata of %s: %w", p.ID, err)
	}
	p.Metadata, p.RefundOf, p.RefundReason = l.Metadata, l.RefundOf, l.RefundReason
	return p, nil
}

// payment is n's new pending payment, not yet stored.
func (s *Service) payment(ctx context.Context, scope tenant.Scope, n newPayment) Payment {
	p := s.pending(ctx, scope, n.in.SourceID, "", n.cents, n.in.Direction, n.desc, nil)
	p.EntryDescription, p.SameDay, p.Purpose, p.DescriptionFits = n.in.EntryDescription, n.in.SameDay, n.purpose, n.fits
	p.Method, p.Rail = withDefaults(n.method, n.rail, p.SameDay)
	if n.fallback != "" {
		p.FallbackReason = &n.fallback
	}
	if instantPayment(p) {
		// Neither settled by the sandbox's delay nor put in an ACH file.
		p.SameDay, p.SettleAt = false, nil
	}
	return p
}

// create records a pending payment of a validated request.
func (s *Service) create(ctx context.Context, scope tenant.Scope, n newPayment) (Payment, error) {
	in := n.in
	if in.Direction == Debit {
		return s.createDebit(ctx, scope, n)
	}
	if in.MandateID != nil || in.Authorization != nil {
		return Payment{}, errs.Invalid("mandate_id", "A credit takes no mandate_id or authorization; only debits are authorized by the customer.")
	}
	p := s.payment(ctx, scope, n)
	out, err := s.store.CreatePayment(ctx, p)
	src := out.Source
	switch {
	case err == nil && out.Created:
		p.CustomerID = src.CustomerID
		return p, nil
	case err == nil:
		err = out.refusal(in.Direction, p)
	}
	if err == nil {
		err = fmt.Errorf("credit on %s: a live source took no credit", in.SourceID)
	}
	return Payment{}, sourceRefusal(err)
}

// createDebit records a pending debit and, unless the request names a
// mandate, the mandate that authorizes it, in one statement (see
// Store.CreateDebit). A refusal is the one the statement decided, under
// its locks: the source's, the reinitiation's, the entry description's,
// the originator's, then the named mandate's.
func (s *Service) createDebit(ctx context.Context, scope tenant.Scope, n newPayment) (Payment, error) {
	in := n.in
	p := s.payment(ctx, scope, n)
	d := NewDebit{Payment: p, SECCodes: [2]string{EntrySEC(Debit, false), EntrySEC(Debit, true)}}
	var authErr error
	switch {
	case in.MandateID != nil && in.Authorization != nil:
		authErr = bothGiven()
	case in.MandateID != nil:
		d.Payment.MandateID = in.MandateID
	default:
		m, err := s.newMandate(ctx, scope, in.SourceID, Single, in.Authorization)
		if err != nil {
			authErr = err
			break
		}
		m.UsedAt = &m.CreatedAt
		d.Mandate, d.Payment.MandateID = &m, &m.ID
		d.Created = event.New(scope, event.MandateCreated, m, m.CreatedAt)
	}
	d.Reinitiation = reinitiationBounds(p.CreatedAt, d.Mandate, in.Authorization != nil)
	if authErr != nil {
		// The source's refusal comes first, as for any debit.
		if _, err := s.usableSource(ctx, s.store, scope, in.SourceID, Debit); err != nil {
			return Payment{}, err
		}
		return Payment{}, authErr
	}
	out, err := s.store.CreateDebit(ctx, d)
	if err != nil {
		return Payment{}, sourceRefusal(err)
	}
	if !out.Created {
		if err := out.refusal(Debit, p); err != nil {
			return Payment{}, err
		}
		return Payment{}, fmt.Errorf("debit on %s: a live source took no debit", in.SourceID)
	}
	d.Payment.CustomerID = out.Source.CustomerID
	return d.Payment, nil
}

// usableSource checks that a live source may take a payment in direction d.
func (s *Service) usableSource(ctx context.Context, tx Store, scope tenant.Scope, id string, d Direction) (SourceInfo, error) {
	src, err := tx.PaymentSource(ctx, scope, id)
	if err == nil {
		err = src.allows(d)
	}
	if err != nil {
		return SourceInfo{}, sourceRefusal(err)
	}
	return src, nil
}

// sourceRefusal names an unknown source as such; other errors pass.
func sourceRefusal(err error) error {
	if errs.Is(err, errs.NotFound) {
		return &errs.Error{Code: errs.FundingSourceNotFound, Param: "funding_source_id",
			Message: "No funding source with this funding_source_id exists."}
	}
	return err
}

// Refusals the creating statements report (DebitOutcome.Refusal), besides
// the originator's limits' names and the named mandate's
// (RefusedMandate*).
const (
	RefusedRemoved          = "removed"
	RefusedUnverified       = "unverified"
	RefusedBlocked          = "blocked"
	RefusedReinitiation     = "reinitiation"
	RefusedEntryDescription = "entry_description"
	RefusedNotActive        = "originator_not_active"
)

// refusal is the error of the refusal the creating statement decided for
// p in direction d; nil when it decided none. It explains the statement's
// decision and decides nothing itself: the source's, the entry
// description's, the reinitiation's, the originator's and the named
// mandate's rules are decided where the payment is written, under its
// locks.
func (o DebitOutcome) refusal(d Direction, p Payment) error {
	switch o.Refusal {
	case "":
		return nil
	case RefusedRemoved, RefusedUnverified, RefusedBlocked:
		return sourceRefused(o.Refusal)
	case RefusedReinitiation:
		if o.Reinitiation != nil {
			return o.Reinitiation.refusal()
		}
	case RefusedEntryDescription:
		if err := entryDescriptionRefusal(p.EntryDescription, d, p.Purpose, o.SEC); err != nil {
			return err
		}
		return errs.Invalid("entry_description", "entry_description does not fit this payment's SEC code "+o.SEC+".")
	case RefusedNotActive, LimitPerEntryDebit, LimitDailyDebit, LimitDailyCredit:
		return o.Originator.refusal(o.Refusal)
	case RefusedMandateUnknown, RefusedMandateOtherSource, RefusedMandateRevoked, RefusedMandateNotRecurring, RefusedMandateUsed:
		return mandateRefused(o.Refusal)
	}
	return fmt.Errorf("payment refused for %q, which no error explains", o.Refusal)
}

// allows is the error of src's refusal of a new payment in direction d,
// nil when it takes one. The rule that makes verification matter (a
// removed source takes no payment, an Unverified or blocked one only
// credits) is decided by the statement that read src, under its share
// lock (SourceInfo's DebitRefusal and CreditRefusal); allows decides
// nothing itself.
func (src SourceInfo) allows(d Direction) error {
	if d == Debit {
		return sourceRefused(src.DebitRefusal)
	}
	return sourceRefused(src.CreditRefusal)
}

// sourceRefused is the error of the source's refusal named name
// (RefusedRemoved, RefusedUnverified, RefusedBlocked); nil for "".
func sourceRefused(name string) error {
	switch name {
	case "":
		return nil
	case RefusedRemoved:
		return &errs.Error{Code: errs.FundingSourceRemoved, Param: "funding_source_id",
			Message: "This funding source was removed and cannot be used for payments."}
	case RefusedUnverified:
		return &errs.Error{Code: errs.DebitNotAllowed, Param: "funding_source_id",
			Message: "A debit against an Unverified funding source is refused; verify it first. Credits are allowed."}
	case RefusedBlocked:
		return &errs.Error{Code: errs.FundingSourceBlocked, Param: "funding_source_id",
			Message: "A return blocked debits from this funding source; unblock it once the customer has authorized again. Credits are allowed."}
	}
	return fmt.Errorf("funding source refused for %q, which no error explains", name)
}

// debitOf names the subscription debit a payment is: which subscription,
// which due date and which attempt, under which mandate.
type debitOf struct {
	subscriptionID, dueDate string
	attempt                 int
	mandateID               *string
	retryOf                 *string // a re-presentment's original debit
	purpose                 Purpose // the subscription's
}

func (s *Service) insert(ctx context.Context, tx Store, scope tenant.Scope, sourceID, customerID string, cents int64, d Direction,
	desc *string, of *debitOf) (Payment, error) {
	p := s.pending(ctx, scope, sourceID, customerID, cents, d, desc, of)
	if err := tx.InsertPayment(ctx, p); err != nil {
		return Payment{}, fmt.Errorf("insert payment %s: %w", p.ID, err)
	}
	return s.holdIfHeld(ctx, tx, p)
}

// pending is a new payment, not yet stored.
func (s *Service) pending(ctx context.Context, scope tenant.Scope, sourceID, customerID string, cents int64, d Direction, desc *string, of *debitOf) Payment {
	now := s.now(ctx).UTC()
	p := Payment{
		Scope: scope, ID: ids.New(ids.Payment), SourceID: sourceID, CustomerID: customerID,
		Amount: money.Format(cents), Currency: "USD", Cents: cents, Direction: d, Description: desc,
		Status: Pending, CreatedAt: now, Day: BankingDay(now).Format(time.DateOnly), Method: MethodStandard, Rail: RailACH,
	}
	if d == Debit {
		none := money.Format(0)
		p.RefundedAmount = &none
	}
	if of != nil {
		p.SubscriptionID, p.DueDate, p.Attempt, p.MandateID = &of.subscriptionID, &of.dueDate, &of.attempt, of.mandateID
		p.RetryOf, p.Purpose = of.retryOf, of.purpose
	}
	p.SettleAt = s.sandboxSettleAt(ctx, scope, now)
	return p
}

// sandboxSettleAt is when a sandbox payment leaving at now becomes final
// without a bank: after the sandbox's delay. Nil where a bank answers.
func (s *Service) sandboxSettleAt(ctx context.Context, scope tenant.Scope, now time.Time) *time.Time {
	if !withoutBank(ctx, scope) {
		return nil
	}
	at := now.Add(s.cfg.SettleDelay)
	return &at
}

// withoutBank reports whether payments of scope, in ctx, go without a
// bank: the sandbox's, off any test clock, which settle after a delay
// with the outcome their amount names (SandboxReturnCode). Production's
// and a test clock's go the bank's path (an ACH file, the bank's answers
// — a clock's bank answers the same amounts —, settlement SettleDays
// after the effective date).
func withoutBank(ctx context.Context, scope tenant.Scope) bool {
	return scope.Env == tenant.Sandbox && testclock.ID(ctx) == ""
}

func (s *Service) amount(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 {
		return 0, &errs.Error{Code: errs.InvalidAmount, Param: "amount", Message: "amount is required, like \"12.34\""}
	}
	c, ok := money.ParseJSON(raw)
	switch {
	case !ok:
		return 0, &errs.Error{Code: errs.InvalidAmount, Param: "amount",
			Message: "amount must be a positive number of dollars with at most two decimals, like 12.34 or \"12.34\""}
	case c <= 0:
		return 0, &errs.Error{Code: errs.InvalidAmount, Param: "amount", Message: "amount must be more than 0.00"}
	case c > s.cfg.MaxAmount:
		return 0, &errs.Error{Code: errs.InvalidAmount, Param: "amount",
			Message: "amount is above the limit of " + money.Format(s.cfg.MaxAmount) + " per payment"}
	}
	return c, nil
}

func description(d *string) (*string, error) { return optionalText("description", d, MaxDescription) }

// optionalText is an optional free text as stored: trimmed, nil when
// empty; refused as param when it is over max characters or holds
// control characters.
func optionalText(param string, t *string, max int) (*string, error) {
	if t == nil {
		return nil, nil
	}
	v := strings.TrimSpace(*t)
	if v == "" {
		return nil, nil
	}
	if utf8.RuneCountInString(v) > max || strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return nil, errs.Invalid(param, fmt.Sprintf("%s must be at most %d characters without control characters", param, max))
	}
	return &v, nil
}
