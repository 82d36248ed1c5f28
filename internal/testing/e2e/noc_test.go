package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	nacha "github.com/moov-io/ach"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestNotificationsOfChangeCorrectTheSource imports a bank's NOC file
// built with moov-io/ach: a C01 corrects the debited source's account
// number, a C07 the credited one's routing number, account number and
// type; the next entry goes out to the corrected account, the old values
// stay in the history, the claim moves to the new number, and a second
// import changes nothing.
func TestNotificationsOfChangeCorrectTheSource(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var debitTrace, creditTrace, depositTrace string
	for _, f := range readACH(t, dir) {
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				switch {
				case b.GetHeader().StandardEntryClassCode == "WEB":
					debitTrace = e.TraceNumber
				case e.TransactionCode == nacha.SavingsCredit && b.GetHeader().CompanyEntryDescription != "ACCTVERIFY":
					creditTrace = e.TraceNumber
				case b.GetHeader().CompanyEntryDescription == "ACCTVERIFY":
					depositTrace = e.TraceNumber
				}
			}
		}
	}
	if debitTrace == "" || creditTrace == "" || depositTrace == "" {
		t.Fatalf("traces: debit %q credit %q deposit %q", debitTrace, creditTrace, depositTrace)
	}
	noc := h.nocFile(t, []nocEntry{
		{debitTrace, "C01", &nacha.CorrectedData{AccountNumber: "000999888777"}},
		{creditTrace, "C07", &nacha.CorrectedData{RoutingNumber: "021000021", AccountNumber: "11112222333", TransactionCode: nacha.CheckingCredit}},
		{depositTrace, "C02", &nacha.CorrectedData{RoutingNumber: "123456789"}}, // no such bank
		{"121042889999999", "C01", &nacha.CorrectedData{AccountNumber: "12345678"}},
	})
	res, err := o.ImportReturns(context.Background(), bytes.NewReader(noc))
	if err != nil || res.NotificationsOfChange != 4 || res.Changes != 4 || res.ChangesApplied != 2 || len(res.ChangesRefused) != 1 ||
		!strings.HasPrefix(res.ChangesRefused[0], depositTrace+" C02") || len(res.Unknown) != 1 {
		t.Fatalf("ImportReturns = %+v, %v", res, err)
	}
	debited := th.WantOK(t, h.Get("/v2/funding-source/"+s.verified, s.key))
	if debited["last_four"] != "8777" || debited["account_type"] != "checking" {
		t.Errorf("source after a C01 = %s", th.MustJSON(debited))
	}
	credited := th.WantOK(t, h.Get("/v2/funding-source/"+s.unverified, s.key))
	if credited["last_four"] != "2333" || credited["account_type"] != "checking" || credited["bank_name"] == nil {
		t.Errorf("source after a C07 = %s", th.MustJSON(credited))
	}
	// The C02 to a routing number of no bank could not be applied: its
	// source (the micro-deposits') is blocked.
	if b, _ := credited["block"].(map[string]any); b == nil || b["code"] != "noc_unapplicable" {
		t.Errorf("source after an unapplicable C02 = %s", th.MustJSON(credited))
	}
	if ev := h.Events("funding_source.blocked"); len(ev) != 1 || ev[0]["funding_source_id"] != s.unverified {
		t.Errorf("funding_source.blocked events = %v", ev)
	}
	if a, err := h.Funding.BankAccount(context.Background(), s.scope, s.unverified); err != nil ||
		a.RoutingNumber != "021000021" || a.AccountNumber != "11112222333" || a.AccountType != "checking" {
		t.Errorf("corrected bank account = %+v, %v", a, err)
	}
	updated := h.Events("funding_source.updated")
	codes := []string{}
	for _, ev := range updated {
		codes = append(codes, ev["change_code"].(string))
	}
	sort.Strings(codes)
	if strings.Join(codes, ",") != "C01,C07" {
		t.Errorf("funding_source.updated change codes = %v", codes)
	}
	if b, _ := json.Marshal(updated); bytes.Contains(b, []byte("000999888777")) || bytes.Contains(b, []byte("11112222333")) {
		t.Errorf("an event carries a full account number: %s", b)
	}
	var history []struct {
		Code     string `db:"change_code"`
		LastFour string `db:"old_last_four"`
		Routing  string `db:"old_routing_number"`
		Type     string `db:"old_account_type"`
	}
	if err := h.SQL().Select(&history, `SELECT change_code, old_last_four, old_routing_number, old_account_type
		FROM funding_source_changes ORDER BY change_code`); err != nil {
		t.Fatal(err)
	}
	if len(history) != 2 || history[0].LastFour != "6789" || history[1].Routing != "026009593" || history[1].Type != "savings" {
		t.Errorf("history = %+v", history)
	}
	// The claim moved: another customer may add the old number, not the new.
	other := h.Customer(s.key)
	th.WantOK(t, h.Post("/v2/on-demand/funding-source", s.key, th.SourceBody(other, "021000021", "000123456789")))
	th.WantError(t, h.Post("/v2/on-demand/funding-source", s.key, th.SourceBody(other, "021000021", "000999888777")),
		http.StatusConflict, "account_in_use")

	again, err := o.ImportReturns(context.Background(), bytes.NewReader(noc))
	if err != nil || again.ChangesApplied != 0 || again.ChangesDuplicate != 2 || len(h.Events("funding_source.updated")) != 2 ||
		len(h.Events("funding_source.blocked")) != 1 {
		t.Errorf("second import = %+v, %v; %d updated events", again, err, len(h.Events("funding_source.updated")))
	}

	// The next debit goes out to the corrected account.
	th.WantOK(t, h.Post("/v2/payments", s.key, th.DebitBody(s.verified, `"3.00"`)))
	next := t.TempDir()
	if _, err := h.originator(achConfig(next)).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range readACH(t, next) {
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				if b.GetHeader().StandardEntryClassCode == "WEB" {
					found = strings.TrimSpace(e.DFIAccountNumber) == "000999888777"
				}
			}
		}
	}
	if !found {
		t.Error("the next debit did not go out to the corrected account number")
	}
}

type nocEntry struct {
	trace, code string
	data        *nacha.CorrectedData
}

// nocFile builds a notification-of-change file as a bank sends it, each
// echoing its newest entry's account and company identification.
func (h *harness) nocFile(t *testing.T, entries []nocEntry) []byte {
	t.Helper()
	nocs := make([]noc, len(entries))
	for i, n := range entries {
		nocs[i] = noc{n, h.sentEntry(t, n.trace)}
	}
	return nocsFile(t, nocs)
}

// noc is one notification of change and what it echoes of its entry.
type noc struct {
	nocEntry
	sent
}

// nocsFile builds a notification-of-change file, a COR batch per company.
func nocsFile(t *testing.T, nocs []noc) []byte {
	t.Helper()
	companies := make([]string, len(nocs))
	for i, n := range nocs {
		companies[i] = n.company
	}
	return answersFile(t, nacha.COR, companies, func(i int, e *nacha.EntryDetail) {
		n := nocs[i]
		e.DFIAccountNumber, e.IndividualName = n.account, "NOC"
		a := nacha.NewAddenda98()
		a.ChangeCode, a.OriginalTrace, a.OriginalDFI = n.code, n.trace, "12104288"
		a.CorrectedData = nacha.WriteCorrectionData(n.code, n.data)
		if n.code == "C13" {
			a.CorrectedData = "ADDENDA UNREADABLE" // it corrects nothing, but may not be blank
		}
		a.TraceNumber = e.TraceNumber
		e.Addenda98, e.Category, e.AddendaRecordIndicator = a, nacha.CategoryNOC, 1
	})
}
