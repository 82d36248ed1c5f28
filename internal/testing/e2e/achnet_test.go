package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/adapter/banksim"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/lab/achnet"
	"github.com/fundsource/fundsource/internal/lab/rig"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// network is the service's production origination beside the local ACH
// network: the originator writes into outbox, `fundsource-lab achnet`
// (its Run, with the built-in sandbox rules) answers into inbox, and
// every file it writes goes through the originator's import.
type network struct {
	h             *harness
	key           string
	scope         tenant.Scope
	o             *ach.Originator
	outbox, inbox string
}

func newNetwork(t *testing.T) *network {
	h := newHarness(t) // Monday 2026-11-02
	_, key, scope := liveMerchant(t, h)
	dir := t.TempDir()
	n := &network{h: h, key: key, scope: scope, outbox: filepath.Join(dir, "outbox"), inbox: filepath.Join(dir, "inbox")}
	n.o = h.originator(achConfig(n.outbox))
	return n
}

// originate writes the waiting entries into the outbox.
func (n *network) originate(t *testing.T) {
	t.Helper()
	if written, err := n.o.Run(context.Background()); err != nil || len(written) != 1 {
		t.Fatalf("originate: %v, %v", written, err)
	}
}

// step runs the network on date and imports what it wrote.
func (n *network) step(t *testing.T, date string) (banksim.Summary, ach.ReturnResult) {
	t.Helper()
	var out, errOut bytes.Buffer
	args := []string{"--outbox", n.outbox, "--inbox", n.inbox, "--date", date, "--json"}
	if err := achnet.Run(context.Background(), args, rig.IO{Getenv: os.Getenv, Stdout: &out, Stderr: &errOut}); err != nil {
		t.Fatalf("achnet %v: %v\n%s", args, err, errOut.String())
	}
	var sum banksim.Summary
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("achnet's summary %q: %v", out.String(), err)
	}
	var total ach.ReturnResult
	for _, name := range sum.Written {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := n.o.ImportReturns(context.Background(), f)
		f.Close()
		if err != nil {
			t.Fatalf("import %s: %v", name, err)
		}
		total.Returns += res.Returns
		total.Applied += res.Applied
		total.Duplicate += res.Duplicate
		total.Dishonored += res.Dishonored
		total.Duplicates += res.Duplicates
		total.Contested += res.Contested
		total.LateForDishonor += res.LateForDishonor
		total.Unmatched += res.Unmatched
		total.Ambiguous += res.Ambiguous
		total.Unknown = append(total.Unknown, res.Unknown...)
		total.Changes += res.Changes
		total.ChangesApplied += res.ChangesApplied
		total.ChangesDuplicate += res.ChangesDuplicate
		total.ChangesRefused = append(total.ChangesRefused, res.ChangesRefused...)
	}
	return sum, total
}

// traceOf is the outbox trace number of the entry of cents.
func (n *network) traceOf(t *testing.T, cents int) string {
	t.Helper()
	_, e := batchOf(t, readACH(t, n.outbox), cents)
	return e.TraceNumber
}

// TestACHNetworkReturnsRemoveOrBlockTheSource: micro-deposits to an R03
// account come back a banking day after settlement and remove the
// source; a consumer's WEB debit to an R07 account and a business's CCD
// debit to an R29 account come back two banking days after it, and the
// import blocks both sources, so the next debit is 403
// funding_source_blocked; the network answers nothing twice.
func TestACHNetworkReturnsRemoveOrBlockTheSource(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	consumer := h.Customer(n.key)
	revoked := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(consumer, "021000021", "000123450007")))["funding_source_id"].(string)
	business := th.WantOK(t, h.Post("/v2/customers", n.key,
		`{"first_name":"Bea","last_name":"Baker","email":"bea@example.com","business_name":"Bea's Bakery LLC"}`))["user_id"].(string)
	corporate := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(business, "021000021", "000555550029")))["funding_source_id"].(string)
	closed := th.WantOK(t, h.Post("/v2/funding-source", n.key, th.SourceBody(consumer, "026009593", "000123450003")))["funding_source_id"].(string)
	th.WantOK(t, h.Initiate(n.key, closed))
	webDebit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(revoked, `"25.00"`)))["payment_id"].(string)
	ccdDebit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(corporate, `"41.00"`)))["payment_id"].(string)
	n.originate(t)
	webTrace, ccdTrace := n.traceOf(t, 2500), n.traceOf(t, 4100)

	// Effective Tuesday 2026-11-03: the returns are due Thursday.
	if sum, _ := n.step(t, "2026-11-02"); len(sum.Written) != 0 || sum.Pending != 4 || sum.NextDue != "2026-11-04" {
		t.Fatalf("achnet on the origination day = %+v", sum)
	}
	// Both credits of the verification come back; the second changes nothing more.
	sum, res := n.step(t, "2026-11-04")
	if len(sum.Written) != 1 || sum.Settled != 4 || sum.Returns != 2 || res.Applied != 2 || sum.Pending != 2 {
		t.Fatalf("achnet a banking day after settlement = %+v; import %+v", sum, res)
	}
	s := th.WantOK(t, h.Get("/v2/funding-source/"+closed, n.key))
	if v := s["verification"].(map[string]any); v["status"] != "failed" || v["return_code"] != "R03" || s["removed_reason"] != "return_R03" {
		t.Errorf("source after an R03 = %s", th.MustJSON(s))
	}
	if ev := h.Events("funding_source.verification_failed"); len(ev) != 1 {
		t.Errorf("verification_failed events = %d, want 1", len(ev))
	}
	sum, res = n.step(t, "2026-11-05")
	if len(sum.Written) != 1 || sum.Returns != 2 || res.Returns != 2 || res.Applied != 2 || len(res.Unknown) != 0 {
		t.Fatalf("achnet two banking days after settlement = %+v; import %+v", sum, res)
	}
	// The file is the returns a bank sends: each in its original class,
	// naming the original trace number.
	f, err := nacha.ReadFile(sum.Written[0])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range f.Batches {
		for _, e := range b.GetEntries() {
			got[e.Addenda99.OriginalTrace] = b.GetHeader().StandardEntryClassCode + " " + e.Addenda99.ReturnCode
		}
	}
	if got[webTrace] != "WEB R07" || got[ccdTrace] != "CCD R29" || f.Header.ImmediateDestination != "121042882" {
		t.Errorf("return file: %v, header %+v", got, f.Header)
	}

	for src, code := range map[string]string{revoked: "R07", corporate: "R29"} {
		s := th.WantOK(t, h.Get("/v2/funding-source/"+src, n.key))
		if b, _ := s["block"].(map[string]any); b["code"] != code {
			t.Errorf("source after an %s = %s", code, th.MustJSON(s))
		}
		th.WantError(t, h.Post("/v2/payments", n.key, th.DebitBody(src, `"1.00"`)), http.StatusForbidden, "funding_source_blocked")
	}
	for id, code := range map[string]string{webDebit: "R07", ccdDebit: "R29"} {
		if p := th.WantOK(t, h.Get("/v2/payments/"+id, n.key)); p["status"] != "failed" || p["failure_code"] != code {
			t.Errorf("payment returned %s = %s", code, th.MustJSON(p))
		}
	}
	if ev := h.Events("funding_source.blocked"); len(ev) != 2 {
		t.Errorf("funding_source.blocked events = %d, want 2", len(ev))
	}
	// The same day again, and the next: nothing more.
	for _, d := range []string{"2026-11-05", "2026-11-06"} {
		if sum, _ := n.step(t, d); len(sum.Written) != 0 || sum.Returns != 0 {
			t.Errorf("achnet on %s again = %+v", d, sum)
		}
	}
}

// TestACHNetworkNoticesOfChangeCorrectMicroDepositSources: micro-deposits
// to a C01 account and to a C02 account bring one notification of change
// each; the import corrects the sources (last_four, bank_name,
// funding_source.updated with change_code), and the next entry, to the
// corrected account, is accepted.
func TestACHNetworkNoticesOfChangeCorrectMicroDepositSources(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	user := h.Customer(n.key)
	number := th.WantOK(t, h.Post("/v2/funding-source", n.key, th.SourceBody(user, "026009593", "44449101")))["funding_source_id"].(string)
	bank := th.WantOK(t, h.Post("/v2/funding-source", n.key, th.SourceBody(user, "026009593", "55559102")))["funding_source_id"].(string)
	th.WantOK(t, h.Initiate(n.key, number))
	th.WantOK(t, h.Initiate(n.key, bank))
	if s := th.WantOK(t, h.Get("/v2/funding-source/"+bank, n.key)); s["bank_name"] != "Bank of America" {
		t.Fatalf("source before = %s", th.MustJSON(s))
	}
	n.originate(t)

	// The network reads the file the day it is written (a file first read
	// after its effective date settles that later day).
	n.step(t, "2026-11-02")
	sum, res := n.step(t, "2026-11-05")
	if len(sum.Written) != 1 || sum.Changes != 2 || res.Changes != 2 || res.ChangesApplied != 2 || len(res.ChangesRefused) != 0 {
		t.Fatalf("achnet = %+v; import %+v", sum, res)
	}
	if s := th.WantOK(t, h.Get("/v2/funding-source/"+number, n.key)); s["last_four"] != "9100" {
		t.Errorf("source after a C01 = %s", th.MustJSON(s))
	}
	s := th.WantOK(t, h.Get("/v2/funding-source/"+bank, n.key))
	if s["bank_name"] != "JPMorgan Chase Bank" || s["last_four"] != "9102" {
		t.Errorf("source after a C02 = %s", th.MustJSON(s))
	}
	if a, err := h.Funding.BankAccount(context.Background(), n.scope, bank); err != nil || a.RoutingNumber != "021000021" {
		t.Errorf("bank account after a C02 = %+v, %v", a, err)
	}
	var codes []string
	for _, ev := range h.Events("funding_source.updated") {
		codes = append(codes, ev["change_code"].(string))
	}
	sort.Strings(codes)
	if strings.Join(codes, ",") != "C01,C02" {
		t.Errorf("funding_source.updated change codes = %v", codes)
	}

	// The corrected source verifies with the same deposits; its first
	// debit goes to the corrected number, and the network accepts it.
	a, err := h.Funding.DepositAmounts(context.Background(), n.scope, number, 1)
	if err != nil {
		t.Fatal(err)
	}
	th.WantOK(t, h.Post("/v2/funding-source/verify", n.key, th.VerifyBody(number, fmt.Sprintf("[%.2f,%.2f]", float64(a[0])/100, float64(a[1])/100))))
	th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(number, `"9.00"`)))
	before, _ := filepath.Glob(filepath.Join(n.outbox, "*.ach"))
	n.originate(t)
	_, e := batchOf(t, readACH(t, n.outbox), 900)
	if strings.TrimSpace(e.DFIAccountNumber) != "44449100" || len(before) != 1 {
		t.Errorf("the next debit goes to %q", strings.TrimSpace(e.DFIAccountNumber))
	}
	if sum, res := n.step(t, "2026-11-09"); len(sum.Written) != 0 || sum.Settled != 1 || sum.Pending != 0 || res.Changes != 0 {
		t.Errorf("achnet after the correction = %+v", sum)
	}
}

// TestACHNetworkSettlesACleanDebitAndReturnsALateUnauthorizedOne: two
// WEB debits settle; the service marks both processed; ten banking days
// after settlement (over Veterans Day) the customer of one disputes it,
// and the late R10 fails that payment and blocks its source while the
// other stays processed.
func TestACHNetworkSettlesACleanDebitAndReturnsALateUnauthorizedOne(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	user := h.Customer(n.key)
	clean := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "021000021", "000123456789")))["funding_source_id"].(string)
	disputed := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(user, "021000021", "000123451010")))["funding_source_id"].(string)
	cleanDebit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(clean, `"12.00"`)))["payment_id"].(string)
	lateDebit := th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(disputed, `"30.00"`)))["payment_id"].(string)
	n.originate(t)
	lateTrace := n.traceOf(t, 3000)

	if sum, _ := n.step(t, "2026-11-03"); sum.Settled != 2 || len(sum.Written) != 0 || sum.NextDue != "2026-11-18" {
		t.Fatalf("achnet on the settlement date = %+v", sum)
	}
	h.Clock.Advance(4 * 24 * time.Hour) // Friday 2026-11-06
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{cleanDebit, lateDebit} {
		if p := th.WantOK(t, h.Get("/v2/payments/"+id, n.key)); p["status"] != "processed" {
			t.Errorf("payment after settlement = %s", th.MustJSON(p))
		}
	}
	if n := len(h.Events("payment.success")); n != 2 {
		t.Errorf("payment.success events = %d, want 2", n)
	}
	for _, d := range []string{"2026-11-06", "2026-11-11", "2026-11-17"} {
		if sum, _ := n.step(t, d); len(sum.Written) != 0 {
			t.Errorf("achnet on %s = %+v", d, sum)
		}
	}
	sum, res := n.step(t, "2026-11-18")
	if len(sum.Written) != 1 || res.Applied != 1 {
		t.Fatalf("achnet on 2026-11-18 = %+v; import %+v", sum, res)
	}
	f, err := nacha.ReadFile(sum.Written[0])
	if err != nil {
		t.Fatal(err)
	}
	b := f.Batches[0]
	if e := b.GetEntries()[0]; e.Addenda99.ReturnCode != "R10" || e.Addenda99.OriginalTrace != lateTrace || e.Amount != 3000 ||
		b.GetHeader().EffectiveEntryDate != "261118" || b.GetHeader().StandardEntryClassCode != "WEB" {
		t.Errorf("late return = %s / %+v in %+v", e.String(), e.Addenda99, b.GetHeader())
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+lateDebit, n.key)); p["status"] != "failed" || p["failure_code"] != "R10" {
		t.Errorf("disputed payment = %s", th.MustJSON(p))
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+cleanDebit, n.key)); p["status"] != "processed" {
		t.Errorf("clean payment = %s", th.MustJSON(p))
	}
	if s := th.WantOK(t, h.Get("/v2/funding-source/"+disputed, n.key)); s["block"] == nil {
		t.Errorf("source after a late R10 = %s", th.MustJSON(s))
	}
	th.WantError(t, h.Post("/v2/payments", n.key, th.DebitBody(disputed, `"1.00"`)), http.StatusForbidden, "funding_source_blocked")
	th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(clean, `"1.00"`)))
}
