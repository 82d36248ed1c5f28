package e2e_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/originator"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// namedLiveMerchant is liveMerchant with a name of its own.
func namedLiveMerchant(t *testing.T, h *harness, name string) (merchant.Created, string, tenant.Scope) {
	t.Helper()
	m := h.Merchant(name)
	key := h.Production(m).SecretKey
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	if err := h.Merchants.GrantOnDemand(context.Background(), scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if err := h.Merchants.EnableThirdPartyVerification(context.Background(), scope, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	return m, key, scope
}

// setCompany gives scope's originator the bank's company name and id.
func setCompany(t *testing.T, h *harness, scope tenant.Scope, name, id string) {
	t.Helper()
	if _, err := h.Svc.Originators.Set(context.Background(), scope, originator.Change{CompanyName: &name, CompanyID: &id},
		audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
}

// batchHeaders maps each entry's amount in cents to its batch header.
func batchHeaders(f *nacha.File) map[int]*nacha.BatchHeader {
	out := map[int]*nacha.BatchHeader{}
	for _, b := range f.Batches {
		for _, e := range b.GetEntries() {
			out[e.Amount] = b.GetHeader()
		}
	}
	return out
}

// TestEachOriginatorsPaymentsGoOutUnderItsOwnCompany: two merchants'
// debits of the same class go into one file, each in a batch of its own
// under its originator's company name and id (one set by the operator,
// the other the defaults: the merchant's name folded and a placeholder
// id), while the micro-deposits and their offset go out under the
// platform's ACH_COMPANY_NAME / ACH_COMPANY_ID. A file rebuilt after a
// crash has the same bytes even when a company changed meanwhile.
func TestEachOriginatorsPaymentsGoOutUnderItsOwnCompany(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, acmeKey, acme := namedLiveMerchant(t, h, "Acme Widgets")
	_, zoeKey, zoe := namedLiveMerchant(t, h, "Zoë's Café & Bakery")
	setCompany(t, h, acme, "Acme widgets", "1987654321")

	acmeSrc := th.WantOK(t, h.Post("/v2/on-demand/funding-source", acmeKey, th.SourceBody(h.Customer(acmeKey), "021000021", "000123456789")))["funding_source_id"].(string)
	zoeSrc := th.WantOK(t, h.Post("/v2/on-demand/funding-source", zoeKey, th.SourceBody(h.Customer(zoeKey), "021000021", "000123456790")))["funding_source_id"].(string)
	unverified := th.WantOK(t, h.Post("/v2/funding-source", acmeKey,
		`{"user_id":"`+h.Customer(acmeKey)+`","routing_number":"026009593","account_number":"987654321","account_type":"savings"}`))["funding_source_id"].(string)
	th.WantOK(t, h.Initiate(acmeKey, unverified))
	th.WantOK(t, h.Post("/v2/payments", acmeKey, goodsDebit(acmeSrc, `"25.00"`)))
	th.WantOK(t, h.Post("/v2/payments", zoeKey, goodsDebit(zoeSrc, `"31.00"`)))

	dir := t.TempDir()
	blocked := filepath.Join(dir, "not-a-folder")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The first write fails after the assignment, as after a crash; the
	// company changes before the file is written again.
	if _, err := h.originator(achConfig(blocked)).Run(context.Background()); err == nil {
		t.Fatal("Run into a file instead of a folder succeeded")
	}
	setCompany(t, h, acme, "ACME RENAMED", "1000000042")
	outbox := filepath.Join(dir, "outbox")
	written, err := h.originator(achConfig(outbox)).Run(context.Background())
	if err != nil || len(written) != 1 {
		t.Fatalf("Run = %v, %v", written, err)
	}
	f := readACH(t, outbox)[written[0]]
	if f == nil || len(f.Batches) != 3 {
		t.Fatalf("file = %+v, want 3 batches (micro-deposits, Acme's, Zoë's)", f)
	}
	var zoeID string
	if err := h.SQL().Get(&zoeID, `SELECT company_id FROM originators WHERE merchant_id = $1 AND environment = 'production'`, zoe.MerchantID); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^1[0-9]{9}$`).MatchString(zoeID) {
		t.Errorf("the default company id %q is not 1 and nine digits", zoeID)
	}
	headers := batchHeaders(f)
	for _, w := range []struct {
		cents    int
		name, id string
	}{{2500, "ACME WIDGETS", "1987654321"}, {3100, "ZOE'S CAFE & BAKE", zoeID}} {
		hd := headers[w.cents]
		if hd == nil {
			t.Fatalf("no entry of %d cents", w.cents)
		}
		if strings.TrimSpace(hd.CompanyName) != w.name[:min(len(w.name), 16)] || hd.CompanyIdentification != w.id ||
			hd.StandardEntryClassCode != "WEB" || hd.CompanyEntryDescription != "PURCHASE" {
			t.Errorf("batch of %d cents: %q %q %s %s, want %q %q WEB PURCHASE", w.cents, hd.CompanyName, hd.CompanyIdentification,
				hd.StandardEntryClassCode, hd.CompanyEntryDescription, w.name, w.id)
		}
	}
	deposits := f.Batches[0].GetHeader()
	if deposits.CompanyEntryDescription != "ACCTVERIFY" || strings.TrimSpace(deposits.CompanyName) != "ACME WIDGETS" || deposits.CompanyIdentification != "1987654321" {
		t.Errorf("micro-deposit batch header = %q %q %q, want its merchant's ACME WIDGETS 1987654321", deposits.CompanyEntryDescription, deposits.CompanyName, deposits.CompanyIdentification)
	}

	// Written again from its rows, the file has the same bytes.
	data, err := os.ReadFile(filepath.Join(outbox, written[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.SQL().Exec(`UPDATE ach_files SET status = 'building'`); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(outbox, written[0])); err != nil {
		t.Fatal(err)
	}
	if again, err := h.originator(achConfig(outbox)).Run(context.Background()); err != nil || len(again) != 1 || again[0] != written[0] {
		t.Fatalf("rewrite = %v, %v", again, err)
	}
	if rebuilt, err := os.ReadFile(filepath.Join(outbox, written[0])); err != nil || !bytes.Equal(rebuilt, data) {
		t.Errorf("the rebuilt file differs (%v)", err)
	}
}

// TestADishonorGoesOutUnderItsEntrysCompany: a dishonored return goes out
// in a batch under the company its original entry went out under, even
// after the originator's company changed.
func TestADishonorGoesOutUnderItsEntrysCompany(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	h := n.h
	setCompany(t, h, n.scope, "ACME ORIGINAL", "1555555555")
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", n.key, th.SourceBody(h.Customer(n.key), "021000021", "000123456801")))["funding_source_id"].(string)
	th.WantOK(t, h.Post("/v2/payments", n.key, th.DebitBody(src, `"20.00"`)))
	n.originate(t)
	trace := n.traceOf(t, 2000)
	setCompany(t, h, n.scope, "ACME LATER", "1666666666")
	n.step(t, "2026-11-03")
	if _, res := n.step(t, "2026-11-09"); res.Dishonored != 1 {
		t.Fatalf("import = %+v, want one untimely return dishonored", res)
	}
	h.Clock.Advance(7 * 24 * time.Hour)
	before := outboxNames(n.outbox)
	n.originate(t)
	f, err := nacha.ReadFile(newestOutbox(t, n.outbox, before))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, b := range f.Batches {
		for _, e := range b.GetEntries() {
			if d := e.Addenda99Dishonored; d != nil && d.OriginalEntryTraceNumber == trace {
				found = true
				if hd := b.GetHeader(); hd.CompanyName != "ACME ORIGINAL" || hd.CompanyIdentification != "1555555555" {
					t.Errorf("dishonor batch under %q %q, want the original entry's ACME ORIGINAL 1555555555", hd.CompanyName, hd.CompanyIdentification)
				}
			}
		}
	}
	if !found {
		t.Fatal("no dishonored return in the next file")
	}
}
