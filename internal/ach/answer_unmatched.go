package ach

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
)

// Unmatched answers. A return or notification of change that matches no
// entry, or more than one (answer_match.go), is applied to nothing and kept with
// the file it came in: its entry and addenda records sealed (they carry
// the account number), what an operator needs to decide in the clear. An
// operator matches it to a payment (MatchAnswer: it is then judged and
// applied as an import would have, against that payment's entry, and the
// match is recorded in the payment's merchant's audit log) or dismisses
// it; both are final, and the answer keeps who decided, when and why.

// Unmatched answer statuses.
const (
	AnswerOpen      = "open"
	AnswerMatched   = "matched"
	AnswerDismissed = "dismissed"
)

const answerPrefix = "acha_"

// UnmatchedAnswer is an answer from the bank kept for an operator.
type UnmatchedAnswer struct {
	ID            string     `json:"id"`
	Kind          string     `json:"kind"`   // AnswerReturn or AnswerChange
	Reason        string     `json:"reason"` // ReasonUnmatched or ReasonAmbiguous
	Candidates    int        `json:"candidates"`
	OriginalTrace string     `json:"original_trace"`
	Trace         string     `json:"answer_trace"`
	Code          string     `json:"code"`
	Cents         int64      `json:"amount_cents"`
	AccountLast4  string     `json:"account_last4"`
	CompanyID     string     `json:"company_id"`
	SettlementDay string     `json:"settlement_day,omitempty"` // the return batch's Julian settlement day
	Arrived       string     `json:"arrived_on"`               // the file's date, YYYY-MM-DD
	FileSHA256    string     `json:"file_sha256,omitempty"`
	Status        string     `json:"status"`
	PaymentID     string     `json:"payment_id,omitempty"` // the payment an operator matched it to
	Note          string     `json:"note,omitempty"`
	ResolvedBy    string     `json:"resolved_by,omitempty"` // the operator`
	ResolvedAt    *time.Time `json:"resolved_at,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	// KeyID and Sealed are the entry and addenda records, sealed.
	KeyID  string `json:"-"`
	Sealed []byte `json:"-"`
}

// AnswerStore is the persistence of unmatched answers.
type AnswerStore interface {
	// ACHEntriesByTrace locks every entry with a trace number, newest
	// file first.
	ACHEntriesByTrace(ctx context.Context, trace string) ([]Entry, error)
	// InsertUnmatchedAnswer keeps an answer; false, keeping nothing, when
	// the same answer is kept already.
	InsertUnmatchedAnswer(ctx context.Context, a UnmatchedAnswer) (bool, error)
	// UnmatchedAnswers lists answers of a status ("" for all), oldest
	// first, at most limit.
	UnmatchedAnswers(ctx context.Context, status string, limit int) ([]UnmatchedAnswer, error)
	// UnmatchedAnswersOfCompany lists the open answers whose batch named
	// a company identification, oldest first, at most limit.
	UnmatchedAnswersOfCompany(ctx context.Context, companyID string, limit int) ([]UnmatchedAnswer, error)
	// LockUnmatchedAnswer locks an answer; errs.NotFound when unknown.
	LockUnmatchedAnswer(ctx context.Context, id string) (UnmatchedAnswer, error)
	// ResolveUnmatchedAnswer records an operator's decision.
	ResolveUnmatchedAnswer(ctx context.Context, id, status, paymentID, note, by string, at time.Time) error
	// CountOpenAnswers counts the answers still open.
	CountOpenAnswers(ctx context.Context) (int64, error)
	// EntryOfPayment returns any merchant's payment's entry, locked;
	// errs.NotFound when the payment is in no file.
	EntryOfPayment(ctx context.Context, paymentID string) (Entry, error)
}

// answered is one answer as its file carries it.
type answered struct {
	answer     Answer
	ed         *nacha.EntryDetail
	settlement string // the batch's settlement day as written
	fileSHA256 string
}

// answerOf reads what entry ed of a batch with header bh says about the
// entry it answers.
func (o *Originator) answerOf(kind string, ed *nacha.EntryDetail, bh *nacha.BatchHeader, originalTrace, code string, arrived calendar.Date) Answer {
	account := strings.TrimSpace(ed.DFIAccountNumber)
	a := Answer{Kind: kind, OriginalTrace: strings.TrimSpace(originalTrace), Trace: ed.TraceNumber, Code: strings.TrimSpace(code),
		AccountFP: o.funding.AccountFingerprint(account), CompanyID: strings.TrimSpace(bh.CompanyIdentification), Arrived: arrived}
	if kind == AnswerReturn {
		a.Cents = int64(ed.Amount)
	}
	if len(account) >= 4 {
		a.AccountLast4 = account[len(account)-4:]
	}
	return a
}

// find returns the entry r answers, locked in tx; false when none or
// several match, after keeping r as an unmatched answer (counted in res).
func (o *Originator) find(ctx context.Context, tx Store, r answered, res *ReturnResult) (Entry, bool, error) {
	entries, err := tx.ACHEntriesByTrace(ctx, r.answer.OriginalTrace)
	if err != nil {
		return Entry{}, false, fmt.Errorf("find entries of trace %s: %w", r.answer.OriginalTrace, err)
	}
	cands := make([]Candidate, len(entries))
	for i, e := range entries {
		if cands[i], err = o.candidate(ctx, e); err != nil {
			return Entry{}, false, err
		}
	}
	i, reason := MatchEntry(r.answer, cands)
	if i >= 0 {
		return entries[i], true, nil
	}
	kept, err := o.keep(ctx, tx, r, reason, len(entries))
	switch {
	case err != nil:
		return Entry{}, false, err
	case !kept:
		res.Duplicate++
	case reason == ReasonAmbiguous:
		res.Ambiguous++
	default:
		res.Unmatched++
		res.Unknown = append(res.Unknown, r.answer.OriginalTrace)
	}
	return Entry{}, false, nil
}

// candidate reads the facts an answer is held to about entry e.
func (o *Originator) candidate(ctx context.Context, e Entry) (Candidate, error) {
	c := Candidate{Entry: e, Cents: e.Cents, CompanyID: e.CompanyID}
	if c.CompanyID == "" {
		c.CompanyID = o.cfg.CompanyID // they went out under the platform's (companyOf)
	}
	if e.Kind == KindMicroDeposit && e.DepositIndex >= 1 && e.DepositIndex <= 2 {
		amounts, err := o.funding.DepositAmounts(ctx, e.Scope, e.SourceID, e.DepositSeq)
		if err != nil {
			return c, fmt.Errorf("read micro-deposit amounts of %s: %w", e.SourceID, err)
		}
		c.Cents = int64(amounts[e.DepositIndex-1])
	}
	r, err := o.funding.Receiver(ctx, e.Scope, e.SourceID)
	if err != nil && !errs.Is(err, errs.NotFound) {
		return c, fmt.Errorf("read account of %s: %w", e.SourceID, err)
	}
	c.AccountFPs = [][]byte{e.AccountFP, r.AccountFP}
	return c, nil
}

// keep stores r as an unmatched answer; false when it was kept before.
func (o *Originator) keep(ctx context.Context, tx Store, r answered, reason string, candidates int) (bool, error) {
	records := r.ed.String()
	switch {
	case r.ed.Addenda99 != nil:
		records += "\n" + r.ed.Addenda99.String()
	case r.ed.Addenda98 != nil:
		records += "\n" + r.ed.Addenda98.String()
	}
	a := r.answer
	u := UnmatchedAnswer{ID: ids.New(answerPrefix), Kind: a.Kind, Reason: reason, Candidates: candidates,
		OriginalTrace: a.OriginalTrace, Trace: a.Trace, Code: a.Code, Cents: a.Cents, AccountLast4: a.AccountLast4,
		CompanyID: a.CompanyID, SettlementDay: strings.TrimSpace(r.settlement), Arrived: a.Arrived.Format(time.DateOnly),
		FileSHA256: r.fileSHA256, Status: AnswerOpen, CreatedAt: o.now(ctx).UTC()}
	u.KeyID, u.Sealed = o.funding.SealRecord([]byte(records), answerAAD(u))
	kept, err := tx.InsertUnmatchedAnswer(ctx, u)
	if err != nil {
		return false, fmt.Errorf("keep unmatched %s of trace %s: %w", a.Kind, a.OriginalTrace, err)
	}
	if kept {
		o.logger().Warn("answer from the bank matched no single entry: kept for an operator",
			"answer_id", u.ID, "kind", u.Kind, "reason", reason, "original_trace", a.OriginalTrace, "code", a.Code)
	}
	return kept, nil
}

// answerAAD binds an answer's sealed records to what identifies it.
func answerAAD(u UnmatchedAnswer) string {
	return "ach-answer:" + u.Kind + ":" + u.OriginalTrace + ":" + u.Trace + ":" + u.Code + ":" + u.Arrived
}

// UnmatchedAnswers lists the kept answers of a status ("" for all).
func (o *Originator) UnmatchedAnswers(ctx context.Context, status string, limit int) ([]UnmatchedAnswer, error) {
	list, err := o.store.UnmatchedAnswers(ctx, status, limit)
	if err != nil {
		return nil, fmt.Errorf("list unmatched answers: %w", err)
	}
	return list, nil
}

// ErrAnswerResolved refuses to resolve an answer an operator resolved
// already.
var ErrAnswerResolved = errors.New("the answer was resolved already")

// MatchAnswer applies kept answer id to payment paymentID's entry, judged
// as an import judges it (a return is applied, or dishonored when untimely
// or a duplicate; a notification of change corrects the source), and marks
// the answer matched with the operator's note. It returns what the import
// would have counted.
func (o *Originator) MatchAnswer(ctx context.Context, id, paymentID, note string, by audit.Actor) (ReturnResult, error) {
	res := ReturnResult{Unknown: []string{}, ChangesRefused: []string{}}
	err := o.store.WithTx(ctx, func(tx Store) error {
		u, ed, err := o.openAnswer(ctx, tx, id)
		if err != nil {
			return err
		}
		e, err := tx.EntryOfPayment(ctx, paymentID)
		if err != nil {
			return fmt.Errorf("find the entry of payment %s: %w", paymentID, err)
		}
		arrived, err := time.Parse(time.DateOnly, u.Arrived)
		if err != nil {
			return fmt.Errorf("read the date of answer %s: %w", id, err)
		}
		switch u.Kind {
		case AnswerReturn:
			res.Returns++
			r := returned{code: u.Code, trace: u.Trace, settlement: julian(u.SettlementDay, arrived), rdfi: rdfiOf(ed.Addenda99, ed), arrived: arrived}
			err = o.judgeReturn(ctx, tx, e, r, &res)
		default:
			err = o.applyChange(ctx, tx, e, ed.Addenda98, &res)
		}
		if err != nil {
			return err
		}
		details := map[string]string{"answer_id": id, "payment_id": paymentID, "kind": u.Kind, "code": u.Code,
			"original_trace": u.OriginalTrace, "note": note}
		if err := tx.Payments().RecordAudit(ctx, audit.In(e.Scope, audit.ACHAnswerMatched, by, details)); err != nil {
			return err
		}
		return tx.ResolveUnmatchedAnswer(ctx, id, AnswerMatched, paymentID, note, by.ID, o.now(ctx).UTC())
	})
	if err != nil {
		return res, fmt.Errorf("match answer %s to payment %s: %w", id, paymentID, err)
	}
	res.Changes = res.NotificationsOfChange
	o.refreshAnswers(ctx)
	return res, nil
}

// DismissAnswer marks kept answer id dismissed: it is applied to nothing.
func (o *Originator) DismissAnswer(ctx context.Context, id, note string, by audit.Actor) error {
	err := o.store.WithTx(ctx, func(tx Store) error {
		if _, _, err := o.openAnswer(ctx, tx, id); err != nil {
			return err
		}
		return tx.ResolveUnmatchedAnswer(ctx, id, AnswerDismissed, "", note, by.ID, o.now(ctx).UTC())
	})
	if err != nil {
		return fmt.Errorf("dismiss answer %s: %w", id, err)
	}
	o.refreshAnswers(ctx)
	return nil
}

// openAnswer locks an open answer and reads its sealed records back.
func (o *Originator) openAnswer(ctx context.Context, tx Store, id string) (UnmatchedAnswer, *nacha.EntryDetail, error) {
	u, err := tx.LockUnmatchedAnswer(ctx, id)
	if err != nil {
		return u, nil, err
	}
	if u.Status != AnswerOpen {
		return u, nil, fmt.Errorf("%w (%s)", ErrAnswerResolved, u.Status)
	}
	b, err := o.funding.OpenRecord(u.KeyID, u.Sealed, answerAAD(u))
	if err != nil {
		return u, nil, err
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) != 2 {
		return u, nil, fmt.Errorf("answer %s keeps %d records, want 2", id, len(lines))
	}
	ed := nacha.NewEntryDetail()
	ed.Parse(lines[0])
	switch u.Kind {
	case AnswerReturn:
		ed.Addenda99 = nacha.NewAddenda99()
		ed.Addenda99.Parse(lines[1])
	default:
		ed.Addenda98 = nacha.NewAddenda98()
		ed.Addenda98.Parse(lines[1])
	}
	return u, ed, nil
}

// answerGauge is the open answers, refreshed after each import.
type answerGauge struct{ open atomic.Int64 }

// refreshAnswers reads the open answers' count for /metrics.
func (o *Originator) refreshAnswers(ctx context.Context) {
	if n, err := o.store.CountOpenAnswers(ctx); err == nil {
		o.answers.open.Store(n)
	}
}

// OpenAnswers is the answers kept unmatched that no operator resolved, as
// of the last import or resolution.
func (o *Originator) OpenAnswers() int64 { return o.answers.open.Load() }
