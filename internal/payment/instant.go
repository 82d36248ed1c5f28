package payment

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Instant payouts. A credit's method is standard (the default), same_day
// (Same Day ACH), instant (a pacs.008 over the receiving bank's instant
// rail, RTP or FedNow) or auto (instant where it can go, else same-day
// before the cut-off, else standard). Debits stay ACH.
//
// Where a credit may go instant is decided by one function of facts,
// Route: the bank reachable on a rail the environment has, the amount
// within the rail's limit, the originator's instant switch on. "instant"
// refuses what "auto" would fall back from, with the same reasons.
//
// An instant credit is never sent twice. Its intent, a row with a
// message id unique on the rail, is written and committed with the
// payment before the message leaves, and the message leaves only under a
// lease on that row (as an ACH file is delivered under its lease): no
// network call is made inside a transaction or under a row lock. Before
// its first send a credit passes the departure check an ACH entry passes
// when its file claims it (LeaveInstantTx): a customer or account holder
// the current sanctions list matches holds it, a suspended originator or
// a removed source cancels it, whether it was created a moment ago or
// released from review days later. A
// credit whose answer did not come (a timeout, an unreadable report, a
// process that died between the send and the answer) stays pending with
// rail_status "unknown"; the status worker (ResolveInstant) claims it once
// its lease ran out and resends the same message, which the rail answers
// from its record rather than crediting again. Only a refusal the rail
// gives at once (down: it took nothing) on the first send undoes the
// payment: "instant" answers rail_unavailable with nothing written,
// "auto" goes ACH with fallback_reason rail_unavailable.
//
// A service bound to a caller's transaction (On: an API request under an
// Idempotency-Key) writes the intent in that transaction and sends
// nothing: the caller sends it once the transaction committed
// (Payment.PendingInstant, DeliverInstant).
//
// Instant credits are final: no return window, no reversal
// (not_reversible), no sandbox return. Their originator limits are their
// own (per_entry_instant_credit, daily_instant_credit) besides the daily
// credit limit every credit counts toward. A credit counts toward its
// day's instant limit from the moment it is written, whatever the rail
// answers, as entries count toward the ACH limits; only one the rail took
// nothing of on its first send is removed, and with it its place. The risk rules judge them at
// creation like any credit; a held one is queued and leaves only once an
// operator released it, through the departure check.

// Methods of a payment.
const (
	MethodStandard = "standard"
	MethodSameDay  = "same_day"
	MethodInstant  = "instant"
	MethodAuto     = "auto"
)

// Rails a payment goes on.
const (
	RailACH    = "ach"
	RailRTP    = "rtp"
	RailFedNow = "fednow"
)

// Why an "auto" credit did not go instant (fallback_reason).
const (
	FallbackInstantUnavailable = "instant_unavailable"    // no rail reaches the bank
	FallbackRailUnavailable    = "rail_unavailable"       // the rail is down
	FallbackOverRailLimit      = "over_rail_limit"        // above the rail's or the originator's instant limit
	FallbackInstantOff         = "originator_instant_off" // the originator's instant switch is off
)

// CancelInstantOff is the cancel_reason of an "instant" credit whose
// originator's instant switch was off when it was to leave ("auto" goes
// over ACH instead, with the fallback reason of the same name).
const CancelInstantOff = FallbackInstantOff

// Instant limits, as limit_exceeded names them.
const (
	LimitRail                  = "rail"
	LimitPerEntryInstantCredit = "per_entry_instant_credit"
	LimitDailyInstantCredit    = "daily_instant_credit"
)

// States of an instant credit on its rail (rail_status).
const (
	RailQueued   = "queued"   // never sent: held, or waiting to leave (LeaveInstantTx)
	RailSending  = "sending"  // a process is sending it under its lease
	RailUnknown  = "unknown"  // sent, no readable answer yet
	RailAccepted = "accepted" // ACSC or ACCP: processed
	RailRejected = "rejected" // refused with an ISO reason: failed
)

// Errors of InstantRails.Send: ErrRailDown when the rail took nothing (it
// refused the connection or answered with an error), ErrRailNoAnswer when
// the credit may have been made but no readable answer came.
var (
	ErrRailDown     = errors.New("instant rail took nothing")
	ErrRailNoAnswer = errors.New("instant rail's answer unknown")
)

// InstantOrder is one send of an instant credit.
type InstantOrder struct {
	MessageID string
	Rail      string
	SourceID  string
	Cents     int64
	// Remittance is the remittance line: the payment's id.
	Remittance string
}

// InstantAnswer is the rail's status report on a credit.
type InstantAnswer struct {
	Accepted bool
	Reason   string // ISO 20022 reason of a rejection (AC03…)
	At       time.Time
}

// InstantRails sends instant credits (the funding service's rails).
type InstantRails interface {
	// Reach names the instant rail the bank of a source receives on (""
	// for none) and whether the environment has a rail.
	Reach(ctx context.Context, scope tenant.Scope, sourceID string) (rail string, available bool, err error)
	// Send sends o; its errors wrap ErrRailDown or ErrRailNoAnswer.
	Send(ctx context.Context, scope tenant.Scope, o InstantOrder) (InstantAnswer, error)
}

// InstantConfig are the operator's instant settings.
type InstantConfig struct {
	// RailLimits is the largest credit of each rail, in cents.
	RailLimits map[string]int64
	// Lease is how long a sender holds a credit; zero: 30 s.
	Lease time.Duration
	// Retry is the first wait before a credit without an answer is asked
	// again (doubled each time, at most 10 minutes); zero: 5 s.
	Retry time.Duration
}

// WithInstant turns instant payouts on with rails r.
func (s *Service) WithInstant(r InstantRails, cfg InstantConfig) *Service {
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 5 * time.Second
	}
	s.instant, s.instantCfg = r, cfg
	return s
}

// InstantTerms are an originator's instant switch and limits, with its
// instant credits of one banking day, in cents.
type InstantTerms struct {
	Found    bool
	Instant  bool
	PerEntry int64
	Daily    int64
	Used     int64
}

// InstantCredit is the intent of one instant credit, as stored.
type InstantCredit struct {
	Scope         tenant.Scope
	PaymentID     string
	SourceID      string
	MessageID     string
	Rail          string
	Method        string
	Cents         int64
	Day           string // the banking day it counts toward, YYYY-MM-DD
	State         string
	Reason        string
	Attempts      int
	LeaseToken    string
	LeaseUntil    time.Time
	NextAttemptAt time.Time
	CreatedAt     time.Time
}

// RouteFacts are what decides whether a credit goes instant.
type RouteFacts struct {
	Rail      string // the rail the bank receives on; "" none
	Available bool   // the environment has a rail
	Cents     int64
	RailLimit int64 // the rail's limit, cents
	InstantOn bool  // the originator's switch
}

// Route is the instant rail a credit goes on, or "" and why not (a
// Fallback reason).
func Route(f RouteFacts) (rail, fallback string) {
	switch {
	case f.Rail == "" || !f.Available:
		return "", FallbackInstantUnavailable
	case f.Cents > f.RailLimit:
		return "", FallbackOverRailLimit
	case !f.InstantOn:
		return "", FallbackInstantOff
	}
	return f.Rail, ""
}

// SameDayOpen reports whether an entry created at now still leaves in a
// file that settles today: a banking day, and the next window at or
// before the schedule's same-day cut-off.
func SameDayOpen(sch calendar.Schedule, now time.Time) bool {
	d := calendar.DateOf(now)
	return calendar.IsBusinessDay(d) && sch.Arrival(now, true) == d
}

// creditMethod reads in's method: "" for a request that names none
// (standard, or same_day by same_day: true). same_day sets in.SameDay; a
// debit takes only the ACH methods.
func creditMethod(in *Input) (string, error) {
	if in.Method == nil {
		return "", nil
	}
	m := *in.Method
	switch m {
	case MethodStandard:
		if in.SameDay {
			return "", errs.Invalid("method", `method "standard" contradicts same_day: true; send one of them`)
		}
	case MethodSameDay:
		in.SameDay = true
	case MethodInstant, MethodAuto:
		if in.Direction == Debit {
			return "", errs.Invalid("method", `A debit goes over ACH: method must be "standard" or "same_day"; instant and auto are for credits.`)
		}
		if in.SameDay {
			return "", errs.Invalid("method", `method "`+m+`" contradicts same_day: true; send one of them`)
		}
	default:
		return "", errs.Invalid("method", `method must be "standard", "same_day", "instant" or "auto"`)
	}
	return m, nil
}

// route decides where an instant or auto credit goes before anything is
// written: its rail, or (auto) the ACH fallback with its reason and
// whether it goes same-day. For "instant" every fallback is an error.
func (s *Service) route(ctx context.Context, scope tenant.Scope, n *newPayment) error {
	f := RouteFacts{Cents: n.cents}
	if s.instant != nil {
		var err error
		if f.Rail, f.Available, err = s.instant.Reach(ctx, scope, n.in.SourceID); err != nil {
			return sourceRefusal(err)
		}
		f.RailLimit = s.instantCfg.RailLimits[f.Rail]
	}
	t, err := s.store.InstantTerms(ctx, scope, BankingDay(s.now(ctx)).Format(time.DateOnly), false)
	if err != nil {
		return err
	}
	f.InstantOn = t.Found && t.Instant
	rail, fallback := Route(f)
	if rail != "" {
		if err := t.refusal(n.cents); err != nil {
			if n.method == MethodInstant {
				return err
			}
			rail, fallback = "", FallbackOverRailLimit
		}
	}
	if rail != "" {
		n.rail = rail
		return nil
	}
	if n.method == MethodInstant {
		return routeRefusal(fallback, f)
	}
	s.fallBack(ctx, scope, n, fallback)
	return nil
}

// fallBack sends the "auto" credit n over ACH for reason: same-day when
// it still can go same-day.
func (s *Service) fallBack(ctx context.Context, scope tenant.Scope, n *newPayment, reason string) {
	n.rail, n.fallback = RailACH, reason
	n.in.SameDay = s.sameDayFallback(ctx, scope, n.cents)
}

// errInstantRoomTaken is createInstant's refusal of an "auto" credit the
// originator's instant limits no longer had room for once locked: other
// credits took it after route read them. It falls back as route would.
var errInstantRoomTaken = errors.New("instant limits taken meanwhile")

// sameDayFallback reports whether an auto credit that does not go
// instant goes same-day: before the cut-off, within the same-day entry
// limit, for an originator with Same Day ACH.
func (s *Service) sameDayFallback(ctx context.Context, scope tenant.Scope, cents int64) bool {
	if !SameDayOpen(s.cfg.Schedule, s.now(ctx)) {
		return false
	}
	return s.sameDayAllowed(ctx, scope, cents) == nil
}

// routeRefusal is the error of "instant" where "auto" would fall back.
func routeRefusal(fallback string, f RouteFacts) error {
	switch fallback {
	case FallbackOverRailLimit:
		return limitExceeded(LimitRail, f.RailLimit, "An instant credit over "+f.Rail+" is at most "+money.Format(f.RailLimit)+
			`; send it with method "standard" or "auto".`)
	case FallbackInstantOff:
		return &errs.Error{Code: errs.PermissionDenied, Param: "method",
			Message: `Instant payouts are not enabled for this originator; send the credit with method "standard" or "auto", or ask us to enable them.`}
	}
	return &errs.Error{Code: errs.InstantUnavailable, Param: "funding_source_id",
		Message: `No instant rail reaches this funding source's bank; send the credit with method "standard" or "auto".`}
}

// refusal is the error of the originator's instant limits for a credit
// of cents; nil when it fits.
func (t InstantTerms) refusal(cents int64) error {
	switch {
	case cents > t.PerEntry:
		return limitExceeded(LimitPerEntryInstantCredit, t.PerEntry, "A single instant credit may be at most "+money.Format(t.PerEntry)+".")
	case t.Used+cents > t.Daily:
		return limitExceeded(LimitDailyInstantCredit, max(0, t.Daily-t.Used),
			"This instant credit would pass today's instant credit limit of "+money.Format(t.Daily)+".")
	}
	return nil
}

// createInstant records an instant credit with its intent; unless the
// risk rules held it, the payment carries the intent for the caller to
// send (PendingInstant).
func (s *Service) createInstant(ctx context.Context, scope tenant.Scope, n newPayment, v verdict) (Payment, error) {
	now := s.now(ctx).UTC()
	var p Payment
	ic := InstantCredit{Scope: scope, SourceID: n.in.SourceID, MessageID: ids.New("msg_"), Rail: n.rail, Method: n.method,
		Cents: n.cents, State: RailQueued, LeaseToken: ids.New("lse_"), LeaseUntil: now.Add(s.instantCfg.Lease),
		NextAttemptAt: now.Add(s.instantCfg.Lease), CreatedAt: now}
	err := s.store.WithTx(ctx, func(tx Store) error {
		t, err := tx.InstantTerms(ctx, scope, BankingDay(now).Format(time.DateOnly), true)
		if err != nil {
			return err
		}
		if err := t.refusal(n.cents); err != nil {
			if n.method == MethodAuto {
				return errInstantRoomTaken
			}
			return err
		}
		if p, err = s.On(tx).create(ctx, scope, n); err != nil {
			return err
		}
		if p, err = s.keepLedgerTx(ctx, tx, p, n.ledger); err != nil {
			return err
		}
		ic.PaymentID, ic.Day = p.ID, p.Day
		if v.reason != "" {
			if p, err = s.hold(ctx, tx, p, v); err != nil {
				return err
			}
			ic.LeaseToken, ic.LeaseUntil, ic.NextAttemptAt = "", time.Time{}, now
		}
		p.RailStatus = &ic.State
		return tx.InsertInstantCredit(ctx, ic)
	})
	if err != nil || p.Status == Held {
		return p, err
	}
	// The caller sends it once the intent committed (consequence's
	// DeliverInstant): sending from here would be a network call inside a
	// caller's transaction, or a credit a rollback forgets.
	p.PendingInstant = &ic
	return p, nil
}

// LeaveInstantTx decides, in tx, whether the claimed instant credit ic,
// which has never left (queued), may leave now. It is the departure check
// an ACH file's claim makes (ReleaseTx, then ScreenEntryTx), made where
// an instant credit departs: its payment still pending; its source,
// originator and customer's screening against the current list standing
// (ReleaseTx); the account holder's name, holder (a company's when
// business), screening clear (ScreenEntryTx); and the originator's
// instant switch on. A credit that may leave is marked sending under
// ic's lease and LeaveInstantTx reports true: the caller sends it once tx
// committed. Otherwise it reports false and the payment is as the rule
// left it: held (the credit stays queued, its lease given up, and leaves
// through here once released), canceled, or, for "auto" with the switch
// off, an ACH credit (fallback originator_instant_off).
func (s *Service) LeaveInstantTx(ctx context.Context, tx Store, ic InstantCredit, holder string, business bool) (bool, error) {
	p, err := tx.PaymentToLeave(ctx, ic.Scope, ic.PaymentID)
	if err != nil {
		return false, fmt.Errorf("lock instant credit %s to leave: %w", ic.PaymentID, err)
	}
	ok := p.Status == Pending
	if ok {
		ok, err = s.ReleaseTx(ctx, tx, p)
	}
	if ok && err == nil {
		ok, err = s.ScreenEntryTx(ctx, tx, p.Scope, p.CustomerID, &p, holder, business)
	}
	if ok && err == nil {
		ok, err = s.instantStillOn(ctx, tx, p, ic)
	}
	if err != nil {
		return false, err
	}
	leaves, err := tx.InstantLeaving(ctx, ic, ok, s.now(ctx).UTC())
	if err != nil {
		return false, fmt.Errorf("mark instant credit %s leaving: %w", ic.PaymentID, err)
	}
	return ok && leaves, nil
}

// instantStillOn reports whether the originator of the locked payment p
// still has instant payouts on as its credit ic is to leave; when not,
// "auto" goes over ACH and "instant" is canceled.
func (s *Service) instantStillOn(ctx context.Context, tx Store, p Payment, ic InstantCredit) (bool, error) {
	t, err := tx.InstantTerms(ctx, p.Scope, ic.Day, false)
	if err != nil {
		return false, fmt.Errorf("read the instant terms of merchant %s: %w", p.Scope.MerchantID, err)
	}
	switch {
	case t.Found && t.Instant:
		return true, nil
	case ic.Method == MethodAuto:
		return false, s.achFallbackTx(ctx, tx, ic, FallbackInstantOff)
	}
	_, err = s.void(ctx, tx, p, CancelInstantOff)
	return false, err
}

// achFallbackTx makes, in tx, the "auto" credit ic an ACH credit with
// fallback reason: same-day when it still can be, and in sandbox with
// its simulated settlement time.
func (s *Service) achFallbackTx(ctx context.Context, tx Store, ic InstantCredit, reason string) error {
	sameDay := s.sameDayFallback(ctx, ic.Scope, ic.Cents)
	settleAt := s.sandboxSettleAt(ctx, ic.Scope, s.now(ctx).UTC())
	if err := tx.InstantToACH(ctx, ic, reason, sameDay, settleAt); err != nil {
		return fmt.Errorf("send instant credit %s over ACH (%s): %w", ic.PaymentID, reason, err)
	}
	return nil
}

// SendInstant sends ic over its rail under the message id it keeps
// across sends (the rail answers a resend with its first answer). It
// makes a network call: never from inside a transaction. Its errors wrap
// ErrRailDown or ErrRailNoAnswer.
func (s *Service) SendInstant(ctx context.Context, ic InstantCredit) (InstantAnswer, error) {
	if s.inTx {
		return InstantAnswer{}, errors.New("send an instant credit: not from inside a transaction")
	}
	return s.instant.Send(ctx, ic.Scope, InstantOrder{MessageID: ic.MessageID, Rail: ic.Rail, SourceID: ic.SourceID,
		Cents: ic.Cents, Remittance: ic.PaymentID})
}

// Unanswered records that a send of ic got no answer (err): the credit
// may have been made, and is asked again later under the same message
// id. A first send (the creating request's) the rail took nothing of is
// undone ("instant") or sent over ACH ("auto") instead. It returns the
// payment as it now stands.
func (s *Service) Unanswered(ctx context.Context, ic InstantCredit, first bool, err error) (Payment, error) {
	tookNothing := errors.Is(err, ErrRailDown) && !errors.Is(err, ErrRailNoAnswer)
	if first && tookNothing {
		return s.notTaken(ctx, ic)
	}
	// A credit that had never left (ic as claimed: queued) and that the
	// rail took nothing of still has not: it waits queued, not sent, and
	// is judged again as it leaves.
	taken := !tookNothing || ic.State != RailQueued
	now := s.now(ctx).UTC()
	next := now.Add(s.backoff(ic.Attempts))
	if err := s.store.WithTx(ctx, func(tx Store) error {
		_, err := tx.InstantUnanswered(ctx, ic, now, next, taken)
		return err
	}); err != nil {
		return Payment{}, fmt.Errorf("record an instant credit's missing answer: %w", err)
	}
	return s.Get(ctx, ic.Scope, ic.PaymentID)
}

// backoff is the wait before asking again after attempts sends.
func (s *Service) backoff(attempts int) time.Duration {
	d := s.instantCfg.Retry << min(max(attempts-1, 0), 7)
	return min(d, 10*time.Minute)
}

// AnsweredTx records in tx the rail's answer on ic and its payment:
// processed, or failed with the ISO reason; payment.success or
// payment.failed fires. A credit another sender answered already is left
// as it is. An accepted credit is Finished (the money left; what that
// sets off is the caller's); a rejected one is not, since nothing moved.
func (s *Service) AnsweredTx(ctx context.Context, tx Store, ic InstantCredit, ans InstantAnswer) (Finished, error) {
	at := ans.At.UTC()
	if at.IsZero() {
		at = s.now(ctx).UTC()
	}
	state, reason := RailAccepted, ""
	if !ans.Accepted {
		state, reason = RailRejected, ans.Reason
	}
	ok, err := tx.InstantAnswered(ctx, ic, state, reason, at)
	if err != nil || !ok {
		return Finished{}, err
	}
	p, err := s.lockPayment(ctx, tx, ic.Scope, ic.PaymentID)
	if err != nil || p.Status != Pending {
		return Finished{}, err
	}
	now := s.now(ctx).UTC()
	p.SettledAt = &now
	typ := event.PaymentSuccess
	if ans.Accepted {
		p.Status = Processed
	} else {
		code, text := reason, InstantReason(reason)
		p.Status, p.FailureCode, p.FailureReason = Failed, &code, &text
		typ = event.PaymentFailed
	}
	if err := tx.FinishPayment(ctx, p); err != nil {
		return Finished{}, err
	}
	if p, err = tx.Payment(ctx, ic.Scope, ic.PaymentID); err != nil {
		return Finished{}, err
	}
	if err := tx.RecordEvent(ctx, event.New(p.Scope, typ, p, now)); err != nil {
		return Finished{}, err
	}
	if !ans.Accepted {
		return Finished{}, nil
	}
	return finished(p, ""), nil
}

// notTaken handles a first send the rail took nothing of: "instant"
// removes the payment and its intent (503 rail_unavailable, as if nothing
// had been written, its place in the day's usage given back), "auto" sends
// it over ACH instead.
func (s *Service) notTaken(ctx context.Context, ic InstantCredit) (Payment, error) {
	if ic.Method == MethodInstant {
		if err := s.store.WithTx(ctx, func(tx Store) error { return tx.DropInstantCredit(ctx, ic) }); err != nil {
			return Payment{}, fmt.Errorf("undo an instant credit the rail did not take: %w", err)
		}
		return Payment{}, (&errs.Error{Code: errs.RailUnavailable,
			Message: `The instant rail is unavailable; nothing was sent. Try again later, or send the credit with method "auto" or "standard".`}).
			WithDetail("retry_after", strconv.Itoa(railRetryAfter))
	}
	if err := s.store.WithTx(ctx, func(tx Store) error { return s.achFallbackTx(ctx, tx, ic, FallbackRailUnavailable) }); err != nil {
		return Payment{}, err
	}
	return s.Get(ctx, ic.Scope, ic.PaymentID)
}

// railRetryAfter is the Retry-After, in seconds, of rail_unavailable.
const railRetryAfter = 30

// DueInstant claims the instant credits that are due to be sent: queued
// ones (released from review, or whose sender died before they left),
// which the caller lets leave first (LeaveInstantTx), and those sent
// without an answer whose lease ran out, each under a new lease for the
// caller to send (SendInstant) under its own message id. Several
// processes may claim at once; each credit goes to one.
func (s *Service) DueInstant(ctx context.Context) ([]InstantCredit, error) {
	if s.instant == nil {
		return nil, nil
	}
	now := s.now(ctx).UTC()
	var due []InstantCredit
	if err := s.store.WithTx(ctx, func(tx Store) (err error) {
		due, err = tx.ClaimInstantCredits(ctx, now, ids.New("lse_"), now.Add(s.instantCfg.Lease), batchSize)
		return err
	}); err != nil {
		return nil, fmt.Errorf("claim instant credits: %w", err)
	}
	return due, nil
}

// instantPayment reports whether p went on an instant rail.
func instantPayment(p Payment) bool { return p.Rail == RailRTP || p.Rail == RailFedNow }

// notReversible is the error of a reversal or return of an instant credit.
func notReversible() error {
	return errs.New(errs.NotReversible, "An instant credit is final once the rail accepted it: it cannot be reversed or returned.")
}

// InstantReason is the meaning of an ISO 20022 status reason.
func InstantReason(code string) string {
	switch code {
	case "AC03":
		return "Invalid creditor account number"
	case "AC04":
		return "Closed account"
	case "AC06":
		return "Blocked account"
	case "AM04":
		return "Insufficient funds"
	case "AM02":
		return "Amount above the allowed maximum"
	case "AG01":
		return "Transaction forbidden on this account"
	case "MS03":
		return "Reason not specified"
	}
	return "Rejected by the instant rail (" + code + ")"
}

// withDefaults is a payment's method and rail where they are not stored:
// a payment from before methods, or one that named none.
func withDefaults(method, rail string, sameDay bool) (string, string) {
	if method == "" {
		method = MethodStandard
		if sameDay {
			method = MethodSameDay
		}
	}
	if rail == "" {
		rail = RailACH
	}
	return method, rail
}

// WithRailDefaults fills p's method and rail where the store has none.
func (p Payment) WithRailDefaults() Payment {
	p.Method, p.Rail = withDefaults(p.Method, p.Rail, p.SameDay)
	return p
}
