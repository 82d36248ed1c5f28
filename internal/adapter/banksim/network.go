package banksim

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/core/calendar"
)

// Network is the simulated ACH network between an originator's outbox and
// its inbox of returns, notifications of change and statements. Steps on
// one Exchange must not overlap: each reads the state the last one saved,
// and two at once would answer the same entries twice.
type Network struct {
	Exchange Exchange // the originator's files, where the answers go, and the network's memory
	Rules    Rules
	// NoStatements: the bank writes no camt.053 statements (a sandbox
	// test clock's bank, whose originator reconciles nothing).
	NoStatements bool
	// Amounts, when set, names the return an entry's amount asks for (a
	// sandbox's magic amounts; retry: the entry is a re-presentment,
	// described RETRY PYMT), tried before the account rules; "" for
	// none. Its return comes when an account rule of the same code would
	// send it (2 banking days when no rule has the code).
	Amounts func(cents int64, retry bool) string
}

// byAmount is the rule n.Amounts gives entry ed of batch bh, if any.
func (n *Network) byAmount(ed *nacha.EntryDetail, bh *nacha.BatchHeader) (Rule, bool) {
	if n.Amounts == nil {
		return Rule{}, false
	}
	retry := strings.TrimSpace(bh.CompanyEntryDescription) == ach.DescriptionRetry
	code := n.Amounts(int64(ed.Amount), retry)
	if code == "" {
		return Rule{}, false
	}
	r := Rule{Answer: code, AfterBankingDays: 2}
	for _, known := range n.Rules {
		if known.Answer == code && !known.Untimely && known.RepeatAfterBankingDays == 0 {
			r.AfterBankingDays = known.AfterBankingDays
			break
		}
	}
	return r, true
}

// Summary is what one Step did.
type Summary struct {
	Date       string   `json:"date"`
	BankingDay bool     `json:"banking_day"`
	Files      int      `json:"files"`     // outbox files read
	NewFiles   int      `json:"new_files"` // of them, seen for the first time
	Rejected   []string `json:"rejected"`  // outbox files that are not valid NACHA files, with why
	Entries    int      `json:"entries"`   // entries to other banks in them
	Settled    int      `json:"settled"`   // entries that settled at this step
	Returns    int      `json:"returns"`   // returns written at this step
	Changes    int      `json:"changes"`   // notifications of change written at this step
	Dishonors  int      `json:"dishonors"` // dishonored returns from the ODFI read for the first time
	Contested  int      `json:"contested"` // contested dishonored returns written at this step
	Pending    int      `json:"pending"`   // answers not yet due
	NextDue    string   `json:"next_due,omitempty"`
	Written    []string `json:"written"` // inbox files of returns and NOCs written at this step, where the Exchange put them
	// Statements are the camt.053 statements written at this step (a
	// banking day's bookings on the originator's account), where the
	// Exchange put them.
	Statements []string `json:"statements"`
	Answers    []string `json:"answers"` // one line per answer written: code, class, trace, the account's last four
}

const dateLayout = "2006-01-02"

// answer is one return, notification of change or contested dishonored
// return to send.
type answer struct {
	code      string
	corrected *nacha.CorrectedData
	entry     *nacha.EntryDetail // the original entry, or the dishonored return contested
	batch     *nacha.BatchHeader
	header    nacha.FileHeader
	repeat    bool // a return sent a second time
	contest   *contest
}

// Step runs the network on date: it reads every outbox file, settles the
// entries whose settlement date has come, and, on a banking day, writes
// the answers due by date into one inbox file per originating bank and
// the day's statements. The state is saved last: an error leaves the
// saved state as it was, and the next step answers what this one did not
// finish. The Exchange's errors come back as it gave them.
func (n *Network) Step(ctx context.Context, date calendar.Date) (Summary, error) {
	sum := Summary{Date: date.Format(dateLayout), BankingDay: calendar.IsBusinessDay(date), Rejected: []string{}, Written: []string{}, Answers: []string{}}
	st, err := n.load(ctx)
	if err != nil {
		return sum, err
	}
	files, err := n.Exchange.Outbox(ctx)
	if err != nil {
		return sum, err
	}
	var due []answer
	var next calendar.Date
	var books []booking
	for _, of := range files {
		name, data := of.Name, of.Data
		file, err := nacha.NewReader(bytes.NewReader(data)).Read()
		if err == nil {
			err = file.Validate()
		}
		if err != nil {
			// An ACH operator rejects a file that does not parse, whole.
			sum.Rejected = append(sum.Rejected, name+": "+err.Error())
			continue
		}
		sum.Files++
		digest := sha256.Sum256(data)
		fst, seen := st.Files[name]
		if !seen || fst.SHA256 != hex.EncodeToString(digest[:]) {
			fst = fileState{SHA256: hex.EncodeToString(digest[:]), Read: sum.Date, Settles: settlement(&file, date).Format(dateLayout)}
			st.Files[name] = fst
			sum.NewFiles++
		}
		settles, _ := time.Parse(dateLayout, fst.Settles)
		odfi := strings.TrimSpace(file.Header.ImmediateOrigin)
		books = append(books, n.bookOutbox(&st, name, fst, &file, date)...)
		noticed := map[string]bool{} // accounts given a notification of change from this file
		for _, b := range file.Batches {
			bh := b.GetHeader()
			for _, ed := range b.GetEntries() {
				if ed.Addenda99Dishonored != nil {
					if a, when, ok := n.dishonored(&st, file.Header.FileCreationDate, ed, bh, settles, &sum); ok {
						if when.After(date) || !sum.BankingDay {
							sum.Pending++
							next = earliest(next, when, date)
							continue
						}
						a.header = file.Header
						due = append(due, a)
					}
					continue
				}
				debit, ok := originalDirection(ed.TransactionCode)
				if !ok || ed.RDFIIdentification+ed.CheckDigit == odfi {
					continue // not a posting entry, or the ODFI's own account (the offset)
				}
				sum.Entries++
				// Decided before the state is consulted: which entry of a
				// file carries an account's notification does not change
				// from run to run.
				a, when, ok := n.answerFor(ed, bh, debit, settles, noticed)
				key := entryKey(ed.TraceNumber, file.Header.FileCreationDate)
				es := st.Entries[key]
				if es.Answer != "" {
					// A bank that returns an entry twice sends the same return again.
					r, _ := n.Rules.Match(strings.TrimSpace(ed.DFIAccountNumber))
					if !ok || es.Repeated != "" || r.RepeatAfterBankingDays == 0 || !isReturn(es.Answer) {
						continue
					}
					answered, _ := time.Parse(dateLayout, es.Answered)
					if when = calendar.AddBusinessDays(answered, r.RepeatAfterBankingDays); when.After(date) || !sum.BankingDay {
						sum.Pending++
						next = earliest(next, when, date)
						continue
					}
					a.header, a.repeat = file.Header, true
					due = append(due, a)
					continue
				}
				if !date.Before(settles) && es.Settled == "" {
					es.Settled = fst.Settles
					st.Entries[key] = es
					sum.Settled++
				}
				if !ok {
					continue
				}
				if when.After(date) || !sum.BankingDay {
					sum.Pending++
					next = earliest(next, when, date)
					continue
				}
				a.header = file.Header
				due = append(due, a)
			}
		}
	}
	if !next.IsZero() {
		sum.NextDue = BankingDayOnOrAfter(next).Format(dateLayout)
	}
	answered, err := n.write(ctx, &st, date, due, &sum)
	if err != nil {
		return sum, err
	}
	books = append(books, answered...)
	if n.NoStatements {
		return sum, n.save(ctx, st)
	}
	if err := n.statements(ctx, &st, date, books, &sum); err != nil {
		return sum, err
	}
	return sum, n.save(ctx, st)
}

// answerFor is the answer the rules give entry ed and the day it is due;
// false when the entry is accepted.
func (n *Network) answerFor(ed *nacha.EntryDetail, bh *nacha.BatchHeader, debit bool, settles calendar.Date, noticed map[string]bool) (answer, calendar.Date, bool) {
	account := strings.TrimSpace(ed.DFIAccountNumber)
	r, ok := n.byAmount(ed, bh)
	if !ok {
		r, ok = n.Rules.Match(account)
	}
	if !ok || r.Answer == Accept {
		return answer{}, time.Time{}, false
	}
	a := answer{code: r.Answer, entry: ed, batch: bh}
	if isReturn(r.Answer) {
		if !Applies(r.Answer, bh.StandardEntryClassCode, debit, r.ConsumerAccount) {
			return answer{}, time.Time{}, false
		}
		if r.Untimely {
			due := calendar.AddBusinessDays(settles, r.AfterBankingDays)
			if late := Late(r.Answer, bh.StandardEntryClassCode, settles); due.Before(late) {
				due = late
			}
			return a, due, true
		}
		return a, Due(r.Answer, settles, r.AfterBankingDays), true
	}
	// A notification of change: one per account and file, and none when
	// the entry already carries the corrected data.
	routing := ed.RDFIIdentification + ed.CheckDigit
	key := routing + "/" + account
	if noticed[key] {
		return answer{}, time.Time{}, false
	}
	c, changed := correct(r, routing, account, ed)
	if !changed {
		return answer{}, time.Time{}, false
	}
	noticed[key] = true
	a.corrected = c
	return a, Due(r.Answer, settles, r.AfterBankingDays), true
}

// correct derives the corrected data of rule r's change for entry ed to
// routing/account; false when nothing changes.
func correct(r Rule, routing, account string, ed *nacha.EntryDetail) (*nacha.CorrectedData, bool) {
	what := changeCodes[r.Answer]
	code := ed.TransactionCode
	c := &nacha.CorrectedData{}
	changed := false
	if what.name {
		c.Name = r.Corrected.Name
		changed = changed || c.Name != strings.TrimSpace(ed.IndividualName)
	}
	if what.id {
		c.Identification = r.Corrected.IndividualID
		changed = changed || c.Identification != strings.TrimSpace(ed.IdentificationNumber)
	}
	if what.addenda {
		changed = changed || len(ed.Addenda05) > 0
	}
	if what.routing {
		c.RoutingNumber = r.Corrected.RoutingNumber
		changed = changed || c.RoutingNumber != routing
	}
	if what.account {
		c.AccountNumber = r.Corrected.AccountNumber
		if s := r.Corrected.AccountSuffix; c.AccountNumber == "" {
			c.AccountNumber = account[:max(0, len(account)-len(s))] + s
		}
		changed = changed || c.AccountNumber != account
	}
	if what.kind {
		savings := code/10 == 3
		switch r.Corrected.AccountType {
		case "checking":
			savings = false
		case "savings":
			savings = true
		default:
			savings = !savings
		}
		c.TransactionCode = code%10 + 20
		if savings {
			c.TransactionCode = code%10 + 30
		}
		changed = changed || c.TransactionCode != code
	}
	return c, changed
}

// originalDirection says whether a transaction code is a live debit or
// credit to a checking or savings account (22, 27, 32, 37).
func originalDirection(code int) (debit, ok bool) {
	switch code {
	case nacha.CheckingCredit, nacha.SavingsCredit:
		return false, true
	case nacha.CheckingDebit, nacha.SavingsDebit:
		return true, true
	}
	return false, false
}

// settlement is a file's settlement date: its batches' effective date, or
// the day the network reads it when that is later, on a banking day.
func settlement(f *nacha.File, read calendar.Date) calendar.Date {
	d := read
	for _, b := range f.Batches {
		if e, err := time.Parse("060102", b.GetHeader().EffectiveEntryDate); err == nil && e.After(d) {
			d = e
		}
	}
	return BankingDayOnOrAfter(d)
}

// groupKey puts answers into one batch: as the receiving bank returns
// them, by its routing number and the original batch's company and class.
type groupKey struct {
	change, contest                         bool
	rdfi, sec, company, companyID, describe string
}

// write puts the answers due into one inbox file per originating bank and
// records them in st.
func (n *Network) write(ctx context.Context, st *state, date calendar.Date, due []answer, sum *Summary) ([]booking, error) {
	var books []booking
	byBank := map[string][]answer{}
	var banks []string
	for _, a := range due {
		k := strings.TrimSpace(a.header.ImmediateOrigin)
		if byBank[k] == nil {
			banks = append(banks, k)
		}
		byBank[k] = append(byBank[k], a)
	}
	for _, bank := range banks {
		answers := byBank[bank]
		st.Serial++
		name := fmt.Sprintf("achnet-%s-%03d.ach", date.Format("20060102"), st.Serial)
		data, err := n.build(st, date, answers)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", name, err)
		}
		where, err := n.Exchange.Deliver(ctx, name, data)
		if err != nil {
			return nil, err
		}
		sum.Written = append(sum.Written, where)
		books = append(books, n.bookAnswers(name, bank, data, date)...)
		for _, a := range answers {
			key := entryKey(a.entry.TraceNumber, a.header.FileCreationDate)
			es := st.Entries[key]
			switch {
			case a.repeat:
				es.Repeated = date.Format(dateLayout)
			default:
				es = entryState{Settled: es.Settled, Answer: a.code, Answered: date.Format(dateLayout), File: name}
			}
			st.Entries[key] = es
			switch {
			case a.contest != nil:
				sum.Contested++
			case a.corrected != nil:
				sum.Changes++
			default:
				sum.Returns++
			}
			acct := strings.TrimSpace(a.entry.DFIAccountNumber)
			// No amount: a micro-deposit's would verify the source.
			sum.Answers = append(sum.Answers, fmt.Sprintf("%s %s %s entry %s to the account ending %s",
				a.code, a.batch.StandardEntryClassCode, direction(a.entry.TransactionCode), a.entry.TraceNumber, acct[max(0, len(acct)-4):]))
		}
	}
	return books, nil
}

func direction(code int) string {
	if debit, _ := originalDirection(code); debit {
		return "debit"
	}
	return "credit"
}

// build renders the answers of one originating bank as the ACH operator
// delivers them: a file from the operator to the bank, one batch per
// receiving bank and original batch, returns in the original class with
// an Addenda99, notifications of change in COR batches with an Addenda98.
func (n *Network) build(st *state, date calendar.Date, answers []answer) ([]byte, error) {
	orig := answers[0].header
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination = strings.TrimSpace(orig.ImmediateOrigin)
	fh.ImmediateOrigin = strings.TrimSpace(orig.ImmediateDestination)
	fh.ImmediateDestinationName = orig.ImmediateOriginName
	fh.ImmediateOriginName = orig.ImmediateDestinationName
	fh.FileCreationDate = date.Format("060102")
	fh.FileCreationTime = "0600" // the operator's early delivery window
	fh.FileIDModifier = string("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[st.Serial%36])
	file := nacha.NewFile()
	file.SetHeader(fh)

	groups := map[groupKey][]answer{}
	var keys []groupKey
	for _, a := range answers {
		k := groupKey{change: a.corrected != nil, contest: a.contest != nil, rdfi: a.entry.RDFIIdentification, sec: a.batch.StandardEntryClassCode,
			company: a.batch.CompanyName, companyID: a.batch.CompanyIdentification, describe: a.batch.CompanyEntryDescription}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], a)
	}
	slices.SortStableFunc(keys, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(btoi(a.change), btoi(b.change)), cmp.Compare(btoi(a.contest), btoi(b.contest)), cmp.Compare(a.rdfi, b.rdfi), cmp.Compare(a.sec, b.sec),
			cmp.Compare(a.company+a.companyID+a.describe, b.company+b.companyID+b.describe))
	})
	for i, k := range keys {
		bh := nacha.NewBatchHeader()
		bh.CompanyName, bh.CompanyIdentification = k.company, k.companyID
		bh.StandardEntryClassCode, bh.CompanyEntryDescription = k.sec, k.describe
		if k.change {
			bh.StandardEntryClassCode = nacha.COR
		}
		bh.EffectiveEntryDate = date.Format("060102")
		bh.ODFIIdentification = k.rdfi // the receiving bank originates the answer
		bh.BatchNumber = i + 1
		var eds []*nacha.EntryDetail
		for _, a := range groups[k] {
			st.Trace++
			eds = append(eds, answerEntry(a, k.rdfi, st.Trace))
		}
		if err := ach.AddBatch(file, bh, eds); err != nil {
			return nil, err
		}
	}
	data, err := ach.Encode(file)
	if err != nil {
		return nil, err
	}
	// A bank's file passes every check of the format, not only its totals.
	if err := file.Validate(); err != nil {
		return nil, err
	}
	return data, nil
}

// answerEntry is the entry that carries answer a back to the originating
// bank: the return transaction code of the original (21, 26, 31, 36), its
// account, name and identification, its amount (0 for a notification of
// change), and the addenda naming the original trace number and bank.
func answerEntry(a answer, rdfi string, seq int) *nacha.EntryDetail {
	if a.contest != nil {
		return contestEntry(a, rdfi, seq)
	}
	o := a.entry
	ed := nacha.NewEntryDetail()
	ed.TransactionCode = o.TransactionCode/10*10 + 1
	if debit, _ := originalDirection(o.TransactionCode); debit {
		ed.TransactionCode = o.TransactionCode/10*10 + 6
	}
	ed.SetRDFI(strings.TrimSpace(a.header.ImmediateOrigin))
	ed.DFIAccountNumber = o.DFIAccountNumber
	ed.IndividualName = o.IndividualName
	ed.IdentificationNumber = o.IdentificationNumber
	ed.DiscretionaryData = o.DiscretionaryData
	ed.SetTraceNumber(rdfi, seq)
	ed.AddendaRecordIndicator = 1
	if a.corrected != nil {
		ad := nacha.NewAddenda98()
		ad.ChangeCode, ad.OriginalTrace, ad.OriginalDFI = a.code, o.TraceNumber, o.RDFIIdentification
		ad.CorrectedData = nacha.WriteCorrectionData(a.code, a.corrected)
		if a.code == "C13" {
			// C13 corrects nothing, but the field may not be blank: the
			// bank says what it could not read.
			ad.CorrectedData = "ADDENDA UNREADABLE"
		}
		ad.TraceNumber = ed.TraceNumber
		ed.Addenda98, ed.Category = ad, nacha.CategoryNOC
		return ed
	}
	ed.Amount = o.Amount
	ad := nacha.NewAddenda99()
	ad.ReturnCode, ad.OriginalTrace, ad.OriginalDFI = a.code, o.TraceNumber, o.RDFIIdentification
	ad.TraceNumber = ed.TraceNumber
	ed.Addenda99, ed.Category = ad, nacha.CategoryReturn
	return ed
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
