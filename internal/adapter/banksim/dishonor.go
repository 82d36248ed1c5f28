package banksim

import (
	"fmt"
	"strings"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/core/calendar"
)

// Dishonored returns. The ODFI may refuse a return (R68 untimely, R67
// duplicate, …) with a dishonored return to the receiving bank: an entry
// in the original's SEC code with the return's transaction code and an
// Addenda99 naming the original entry and the return. The network reads
// them from the outbox like any entry; the receiving bank accepts a
// dishonor (nothing is sent) unless the rule of the account says to
// contest it, and then answers the banking day after the dishonor
// settles with a contested dishonored return (R71–R77): the same entry
// back, its Addenda99 naming the original entry, the return and the
// dishonor.

// contest is what a contested dishonored return names.
type contest struct {
	dishonor       *nacha.Addenda99Dishonored
	returned       calendar.Date // the day the original return was sent
	settled        calendar.Date // the original entry's settlement date
	dishonorSettle calendar.Date // the dishonor's settlement date
}

// dishonored reads a dishonored return ed of batch bh in a file created
// on created (YYMMDD), settling on settles: the first time, it is
// counted; the answer is a contest when the account's rule says so (false
// when the dishonor is accepted, or was answered already).
func (n *Network) dishonored(st *state, created string, ed *nacha.EntryDetail, bh *nacha.BatchHeader, settles calendar.Date, sum *Summary) (answer, calendar.Date, bool) {
	key := entryKey(ed.TraceNumber, created)
	es := st.Entries[key]
	if es.Answer != "" {
		return answer{}, time.Time{}, false
	}
	if es.Settled == "" {
		es.Settled = settles.Format(dateLayout)
		st.Entries[key] = es
		sum.Dishonors++
	}
	r, ok := n.Rules.Match(strings.TrimSpace(ed.DFIAccountNumber))
	if !ok || r.Contest == "" {
		return answer{}, time.Time{}, false
	}
	d := ed.Addenda99Dishonored
	orig := st.returned(d.OriginalEntryTraceNumber)
	c := &contest{dishonor: d, dishonorSettle: settles, returned: settles, settled: settles}
	if t, err := time.Parse(dateLayout, orig.Answered); err == nil {
		c.returned = t
	}
	if t, err := time.Parse(dateLayout, orig.Settled); err == nil {
		c.settled = t
	}
	return answer{code: r.Contest, entry: ed, batch: bh, contest: c}, calendar.AddBusinessDays(settles, 1), true
}

// contestEntry is the contested dishonored return of a: the dishonored
// entry back to the originating bank, under the receiving bank's trace
// number.
func contestEntry(a answer, rdfi string, seq int) *nacha.EntryDetail {
	o, c := a.entry, a.contest
	ed := nacha.NewEntryDetail()
	ed.TransactionCode = o.TransactionCode
	ed.SetRDFI(strings.TrimSpace(a.header.ImmediateOrigin))
	ed.DFIAccountNumber = o.DFIAccountNumber
	ed.Amount = o.Amount
	ed.IndividualName = o.IndividualName
	ed.IdentificationNumber = o.IdentificationNumber
	ed.DiscretionaryData = o.DiscretionaryData
	ed.SetTraceNumber(rdfi, seq)
	ed.AddendaRecordIndicator = 1
	ad := nacha.NewAddenda99Contested()
	ad.ContestedReturnCode = a.code
	ad.OriginalEntryTraceNumber = c.dishonor.OriginalEntryTraceNumber
	ad.DateOriginalEntryReturned = c.returned.Format("060102")
	ad.OriginalReceivingDFIIdentification = c.dishonor.OriginalReceivingDFIIdentification
	ad.OriginalSettlementDate = julian(c.settled)
	ad.ReturnTraceNumber = c.dishonor.ReturnTraceNumber
	ad.ReturnSettlementDate = c.dishonor.ReturnSettlementDate
	ad.ReturnReasonCode = c.dishonor.ReturnReasonCode
	ad.DishonoredReturnTraceNumber = o.TraceNumber
	ad.DishonoredReturnSettlementDate = julian(c.dishonorSettle)
	ad.DishonoredReturnReasonCode = strings.TrimPrefix(c.dishonor.DishonoredReturnReasonCode, "R")
	ad.TraceNumber = ed.TraceNumber
	ed.Addenda99Contested, ed.Category = ad, nacha.CategoryDishonoredReturnContested
	return ed
}

// julian is d's day of the year in three digits, as settlement dates are
// written.
func julian(d calendar.Date) string { return fmt.Sprintf("%03d", d.YearDay()) }

// earliest is the earlier of next (zero: none) and when, an answer's due
// day that is not before date (an answer past due goes on the next
// banking day).
func earliest(next, when, date calendar.Date) calendar.Date {
	if when.Before(date) {
		when = date
	}
	if next.IsZero() || when.Before(next) {
		return when
	}
	return next
}
