package e2e_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	nacha "github.com/moov-io/ach"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// parsedEntry is an outbox entry as moov-io/ach reads it back, with its
// batch header.
type parsedEntry struct {
	sec, description string
	e                *nacha.EntryDetail
}

// outboxEntries reads every file of dir with moov-io/ach (ReadFile and
// Validate, in readACH) and returns its entries by amount in cents; it
// fails on a trace number used twice across the files.
func outboxEntries(t *testing.T, dir string) map[int]parsedEntry {
	t.Helper()
	out, traces := map[int]parsedEntry{}, map[string]bool{}
	for _, f := range readACH(t, dir) {
		for _, b := range f.Batches {
			h := b.GetHeader()
			for _, e := range b.GetEntries() {
				if traces[e.TraceNumber] {
					t.Errorf("trace number %s is used twice", e.TraceNumber)
				}
				traces[e.TraceNumber] = true
				out[e.Amount] = parsedEntry{h.StandardEntryClassCode, h.CompanyEntryDescription, e}
			}
		}
	}
	return out
}

// iin is the Individual Identification Number the service gives a source:
// the last 15 characters of its id, upper-cased.
func iin(id string) string { return strings.ToUpper(id[len(id)-15:]) }

// TestOutboxEntriesNameTheirReceivers originates a mix of entries and
// reads the files back independently with moov-io/ach: per entry the SEC
// code follows the source's account_holder_type, the receiver name is
// the person's or the business's, folded to ASCII letter by letter, the
// Individual Identification Number is the source's on every entry of it,
// the description travels in one 05 addenda record (none after a C13),
// and the batch carries the payment's entry description or the one its
// purpose fixes (PURCHASE for goods, PAYROLL for payroll).
func TestOutboxEntriesNameTheirReceivers(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // Monday 2026-11-02
	_, key, _ := liveMerchant(t, h)
	jose := th.WantOK(t, h.Post("/v2/customers", key, `{"first_name":"José","last_name":"Ñúñez-García","email":"jose@example.com"}`))["user_id"].(string)
	bea := th.WantOK(t, h.Post("/v2/customers", key,
		`{"first_name":"Bea","last_name":"Baker","email":"bea@example.com","business_name":"Bea's Bakery LLC"}`))["user_id"].(string)
	source := func(user, account, holder string) string {
		body := th.SourceBody(user, "021000021", account)
		if holder != "" {
			body = strings.TrimSuffix(body, "}") + `,"account_holder_type":"` + holder + `"}`
		}
		src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, body))
		return src["funding_source_id"].(string)
	}
	joseSrc := source(jose, "000111000111", "")
	beaCo := source(bea, "000222000222", "")
	beaOwn := source(bea, "000333000333", "individual")
	quiet := source(jose, "000444000444", "")
	for id, want := range map[string]string{joseSrc: "individual", beaCo: "company", beaOwn: "individual"} {
		if got := th.WantOK(t, h.Get("/v2/funding-source/"+id, key))["account_holder_type"]; got != want {
			t.Errorf("%s: account_holder_type %v, want %s", id, got, want)
		}
	}

	// A first file with a credit to quiet, whose bank then answers C13.
	first := t.TempDir()
	th.WantOK(t, h.Post("/v2/payments", key, `{"funding_source_id":"`+quiet+`","amount":"1.11","direction":"credit","description":"refund"}`))
	o := h.originator(achConfig(first))
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := outboxEntries(t, first)
	if a := before[111].e.Addenda05; len(a) != 1 || a[0].PaymentRelatedInformation != "refund" {
		t.Fatalf("the first credit's addenda: %+v", a)
	}
	res, err := o.ImportReturns(context.Background(), bytes.NewReader(h.nocFile(t, []nocEntry{{before[111].e.TraceNumber, "C13", &nacha.CorrectedData{}}})))
	if err != nil || res.ChangesApplied != 1 {
		t.Fatalf("C13 import = %+v, %v", res, err)
	}

	post := func(body string) { th.WantOK(t, h.Post("/v2/payments", key, body)) }
	debit := func(src, amount, extra string) string {
		return `{"funding_source_id":"` + src + `","amount":"` + amount + `","direction":"debit"` + extra + `,"authorization":` + th.Authorization + `}`
	}
	credit := func(src, amount, extra string) string {
		return `{"funding_source_id":"` + src + `","amount":"` + amount + `","direction":"credit"` + extra + `}`
	}
	post(debit(joseSrc, "10.01", `,"purpose":"goods","description":"Café order #12 — thanks"`))
	post(credit(joseSrc, "10.02", `,"purpose":"payroll","entry_description":"PAYROLL","description":"November salary"`))
	post(debit(beaCo, "10.03", `,"entry_description":"SUPPLIES","description":"Invoice 4471"`))
	post(credit(beaCo, "10.04", ""))
	post(debit(beaOwn, "10.05", ""))
	post(credit(quiet, "10.06", `,"description":"not sent after C13"`))
	th.WantOK(t, h.Post("/v2/subscriptions", key,
		`{"funding_source_id":"`+joseSrc+`","amount":"10.07","interval":"monthly","start_date":"2026-11-02","description":"Box of the month","purpose":"goods","authorization":`+th.Authorization+`}`))
	if n, err := h.Payments.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("RunDue = %d, %v", n, err)
	}
	if pay := th.WantOK(t, h.Get("/v2/payments?funding_source_id="+beaCo, key)); !strings.Contains(th.MustJSON(pay), `"entry_description":"SUPPLIES"`) {
		t.Errorf("payments of %s: %s", beaCo, th.MustJSON(pay))
	}

	second := t.TempDir()
	if _, err := h.originator(achConfig(second)).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := outboxEntries(t, second)
	for _, w := range []struct {
		cents                       int
		sec, description, name, iin string
		addenda, payType            string
	}{
		{1001, "WEB", "PURCHASE", "JOSE NUNEZ-GARCIA", iin(joseSrc), "Cafe order #12 - thanks", "S"},
		{1002, "PPD", "PAYROLL", "JOSE NUNEZ-GARCIA", iin(joseSrc), "November salary", ""},
		{1003, "CCD", "SUPPLIES", "BEA'S BAKERY LLC", iin(beaCo), "Invoice 4471", ""},
		{1004, "CCD", "PAYMENT", "BEA'S BAKERY LLC", iin(beaCo), "", ""},
		{1005, "WEB", "PAYMENT", "BEA BAKER", iin(beaOwn), "", "S"}, // the originator's default purpose, other
		{1006, "PPD", "PAYMENT", "JOSE NUNEZ-GARCIA", iin(quiet), "", ""},
		{1007, "WEB", "PURCHASE", "JOSE NUNEZ-GARCIA", iin(joseSrc), "Box of the month", "R"},
	} {
		p, ok := got[w.cents]
		if !ok {
			t.Errorf("no entry of %d cents", w.cents)
			continue
		}
		e := p.e
		if p.sec != w.sec || p.description != w.description || strings.TrimSpace(e.IndividualName) != w.name ||
			strings.TrimSpace(e.IdentificationNumber) != w.iin || (w.payType != "" && e.PaymentTypeField() != w.payType) {
			t.Errorf("%d cents: %s %q name %q id %q type %q; want %+v", w.cents, p.sec, p.description,
				e.IndividualName, e.IdentificationNumber, e.PaymentTypeField(), w)
		}
		var addenda []string
		for _, a := range e.Addenda05 {
			addenda = append(addenda, a.PaymentRelatedInformation)
		}
		if want := []string{w.addenda}; (w.addenda == "" && len(addenda) != 0) || (w.addenda != "" && (len(addenda) != 1 || addenda[0] != want[0])) {
			t.Errorf("%d cents: addenda %q, want %q", w.cents, addenda, w.addenda)
		}
		if (len(addenda) == 1) != (e.AddendaRecordIndicator == 1) {
			t.Errorf("%d cents: addenda record indicator %d with %d addenda", w.cents, e.AddendaRecordIndicator, len(addenda))
		}
	}
	if len(got) != 7 {
		t.Errorf("%d entries in the second file, want 7", len(got))
	}
	// Trace numbers are unique across the files too.
	names, _ := filepath.Glob(filepath.Join(first, "*.ach"))
	if len(names) != 1 || got[1006].e.TraceNumber == before[111].e.TraceNumber {
		t.Errorf("first file %v; traces %s / %s", names, got[1006].e.TraceNumber, before[111].e.TraceNumber)
	}
}

// TestACHNetworkCorrectsReceiverDetails: the network's banks answer
// credits with a C04 (a new name), a C09 (a new identification number)
// and a C13 (unreadable addenda) in COR files; the import applies each,
// keeps the old values in the source's history and fires
// funding_source.updated with the change code, and the next entries carry
// the corrected name and number, and no addenda for the C13 source, which
// the network then accepts.
func TestACHNetworkCorrectsReceiverDetails(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	user := th.WantOK(t, h.Post("/v2/customers", n.key, `{"first_name":"Zoë","last_name":"Ødegaard","email":"zoe@example.com"}`))["user_id"].(string)
	src := map[string]string{}
	for _, code := range []string{"C04", "C09", "C13"} {
		account := "5555" + map[string]string{"C04": "9104", "C09": "9109", "C13": "9113"}[code]
		src[code] = th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "026009593", account)))["funding_source_id"].(string)
	}
	credit := func(code, amount string) {
		th.WantOK(t, h.Post("/v2/payments", n.key, `{"funding_source_id":"`+src[code]+`","amount":"`+amount+`","direction":"credit","description":"Refund for order 9"}`))
	}
	credit("C04", "2.04")
	credit("C09", "2.09")
	credit("C13", "2.13")
	n.originate(t)
	first := outboxEntries(t, n.outbox)
	if e := first[204].e; strings.TrimSpace(e.IndividualName) != "ZOE ODEGAARD" || len(first[213].e.Addenda05) != 1 {
		t.Fatalf("first entries: %q, C13 source's addenda %d", e.IndividualName, len(first[213].e.Addenda05))
	}

	n.step(t, "2026-11-02")
	sum, res := n.step(t, "2026-11-05")
	if sum.Changes != 3 || res.Changes != 3 || res.ChangesApplied != 3 || len(res.ChangesRefused) != 0 {
		t.Fatalf("achnet = %+v; import %+v", sum, res)
	}
	codes := map[string]string{}
	for _, ev := range h.Events("funding_source.updated") {
		codes[ev["funding_source_id"].(string)] = ev["change_code"].(string)
	}
	for code, id := range src {
		if codes[id] != code {
			t.Errorf("funding_source.updated of %s: %q, want %s", id, codes[id], code)
		}
	}
	var old struct {
		Name string `db:"name"`
		ID   string `db:"id"`
	}
	if err := h.SQL().Get(&old, `SELECT coalesce(old_receiver_name, '') AS name, old_individual_id AS id FROM funding_source_changes
		WHERE funding_source_id = $1 AND change_code = 'C09'`, src["C09"]); err != nil || old.ID != iin(src["C09"]) || old.Name != "" {
		t.Errorf("C09's history: %+v, %v", old, err)
	}

	credit("C04", "3.04")
	credit("C09", "3.09")
	credit("C13", "3.13")
	n.originate(t)
	next := outboxEntries(t, n.outbox)
	if e := next[304].e; strings.TrimSpace(e.IndividualName) != "CORRECTED HOLDER NAME" || strings.TrimSpace(e.IdentificationNumber) != iin(src["C04"]) {
		t.Errorf("after C04: %q %q", e.IndividualName, e.IdentificationNumber)
	}
	if e := next[309].e; strings.TrimSpace(e.IdentificationNumber) != "CORRECTEDID0009" || strings.TrimSpace(e.IndividualName) != "ZOE ODEGAARD" {
		t.Errorf("after C09: %q %q", e.IndividualName, e.IdentificationNumber)
	}
	if e := next[313].e; len(e.Addenda05) != 0 || e.AddendaRecordIndicator != 0 || len(next[304].e.Addenda05) != 1 {
		t.Errorf("after C13: %d addenda (C04 source's: %d)", len(e.Addenda05), len(next[304].e.Addenda05))
	}
	if sum, res := n.step(t, "2026-11-09"); len(sum.Written) != 0 || res.Changes != 0 {
		t.Errorf("achnet after the corrections = %+v", sum)
	}
}
