package e2e_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
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
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func achConfig(dir string) ach.Config {
	return ach.Config{Dir: dir, ODFIRouting: "121042882", DestinationRouting: "231380104", DestinationName: "Federal Reserve Bank",
		OriginName: "Fundsource Bank", CompanyName: "FUNDSOURCE", CompanyID: "1234567890", MicroOffset: true, OffsetAccount: "31337",
		SettlementAccount: banksim.Account("121042882")}
}

func (h *harness) originator(cfg ach.Config) *ach.Originator {
	return ach.NewOriginator(cfg, h.DB.ACH(), h.Funding, h.Payments, h.Svc.Consequences, h.Clock.Now)
}

// readACH parses every file of the outbox with moov-io/ach and validates it.
func readACH(t *testing.T, dir string) map[string]*nacha.File {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.ach"))
	out := map[string]*nacha.File{}
	for _, n := range names {
		f, err := nacha.ReadFile(n)
		if err != nil {
			t.Fatalf("%s does not parse: %v", n, err)
		}
		if err := f.Validate(); err != nil {
			t.Fatalf("%s does not validate: %v", n, err)
		}
		out[filepath.Base(n)] = f
	}
	return out
}

// achSetup: a production merchant with a Verified checking source, an
// Unverified savings source with open micro-deposits, and payments; and a
// sandbox source with deposits and a payment that must never be originated.
type achSetup struct {
	h                    *harness
	key                  string
	scope                tenant.Scope
	verified, unverified string
	debit, credit        string
}

// liveMerchant is a merchant whose production environment creates
// Verified sources on demand: the merchant, its production secret key and
// scope.
func liveMerchant(t *testing.T, h *harness) (merchant.Created, string, tenant.Scope) {
	t.Helper()
	return liveMerchantNamed(t, h, "Acme")
}

// liveMerchantNamed is liveMerchant with a merchant of another name.
func liveMerchantNamed(t *testing.T, h *harness, name string) (merchant.Created, string, tenant.Scope) {
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

func newACHSetup(t *testing.T) *achSetup {
	h := newHarness(t)
	m, key, scope := liveMerchant(t, h)
	s := &achSetup{h: h, key: key, scope: scope}
	user := h.Customer(s.key)
	s.verified = th.WantOK(t, h.Post("/v2/on-demand/funding-source", s.key, th.SourceBody(user, "021000021", "000123456789")))["funding_source_id"].(string)
	s.unverified = th.WantOK(t, h.Post("/v2/funding-source", s.key,
		`{"user_id":"`+user+`","routing_number":"026009593","account_number":"987654321","account_type":"savings"}`))["funding_source_id"].(string)
	th.WantOK(t, h.Initiate(s.key, s.unverified))
	s.debit = th.WantOK(t, h.Post("/v2/payments", s.key, goodsDebit(s.verified, `"25.00"`)))["payment_id"].(string)
	s.credit = th.WantOK(t, h.Post("/v2/payments", s.key, th.PaymentBody(s.unverified, `"10.00"`, "credit")))["payment_id"].(string)

	sandbox := m.Sandbox.SecretKey
	sbSrc := h.Source(sandbox, h.Customer(sandbox), "555555555")
	th.WantOK(t, h.Initiate(sandbox, sbSrc))
	th.WantOK(t, h.Post("/v2/payments", sandbox, th.PaymentBody(sbSrc, `"7.00"`, "credit")))
	return s
}

func TestOriginationWritesEachEntryOnceAndTheFileParsesBack(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	written, err := o.Run(context.Background())
	if err != nil || len(written) != 1 {
		t.Fatalf("Run = %v, %v", written, err)
	}
	files := readACH(t, dir)
	f := files[written[0]]
	if f == nil || len(f.Batches) != 3 {
		t.Fatalf("files = %v", files)
	}
	if f.Header.ImmediateOrigin != "121042882" || f.Header.ImmediateDestination != "231380104" {
		t.Errorf("file header = %+v", f.Header)
	}
	amounts, err := h.Funding.DepositAmounts(context.Background(), s.scope, s.unverified, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The amounts would verify the source: none is stored in clear, and
	// the file itself is for the service's user alone.
	var clear int
	if err := h.SQL().Get(&clear, `SELECT count(*) FROM ach_entries WHERE kind = 'micro_deposit' AND amount_cents IS NOT NULL`); err != nil || clear != 0 {
		t.Errorf("micro-deposit amounts stored in clear in ach_entries: %d (%v)", clear, err)
	}
	if st, err := os.Stat(filepath.Join(dir, written[0])); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the NACHA file's mode: %v (%v), want 0600", st.Mode().Perm(), err)
	}

	// Batch 1: the micro-deposits, two PPD credits to the savings account
	// and the debit of their total from the originator's account, under
	// the merchant's originator as its payments.
	var companyID string
	if err := s.h.SQL().Get(&companyID, `SELECT company_id FROM originators WHERE merchant_id = $1 AND environment = 'production'`, s.scope.MerchantID); err != nil {
		t.Fatal(err)
	}
	deposits := f.Batches[0]
	if hd := deposits.GetHeader(); hd.CompanyEntryDescription != "ACCTVERIFY" || hd.StandardEntryClassCode != "PPD" ||
		hd.ServiceClassCode != nacha.MixedDebitsAndCredits || strings.TrimSpace(hd.CompanyName) != "ACME" || hd.CompanyIdentification != companyID {
		t.Errorf("micro-deposit batch header = %+v, want the merchant's ACME %s", hd, companyID)
	}
	var got []int
	offset := 0
	for _, e := range deposits.GetEntries() {
		if e.TransactionCode == nacha.CheckingDebit {
			if strings.TrimSpace(e.DFIAccountNumber) != "31337" || e.RDFIIdentification+e.CheckDigit != "121042882" {
				t.Errorf("offset entry = %s", e.String())
			}
			offset += e.Amount
			continue
		}
		if e.TransactionCode != nacha.SavingsCredit || strings.TrimSpace(e.DFIAccountNumber) != "987654321" || e.RDFIIdentification+e.CheckDigit != "026009593" {
			t.Errorf("micro-deposit entry = %s", e.String())
		}
		got = append(got, e.Amount)
	}
	if c := deposits.GetControl(); offset == 0 || c.TotalDebitEntryDollarAmount != c.TotalCreditEntryDollarAmount {
		t.Errorf("micro-deposit batch does not balance: offset %d, control %+v", offset, c)
	}
	want := []int{amounts[0], amounts[1]}
	sort.Ints(got)
	sort.Ints(want)
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("micro-deposit amounts in the file = %v, want %v", got, want)
	}

	// Batches 2 and 3: the production payments, a savings credit to a
	// consumer (PPD) and a consumer's checking debit authorized online
	// (WEB, PURCHASE, single).
	byCode := map[int]*nacha.EntryDetail{}
	for i, w := range []struct {
		sec, description string
		class            int
	}{{"PPD", "PAYMENT", nacha.CreditsOnly}, {"WEB", "PURCHASE", nacha.DebitsOnly}} {
		b := f.Batches[1+i]
		if hd := b.GetHeader(); hd.StandardEntryClassCode != w.sec || hd.CompanyEntryDescription != w.description || hd.ServiceClassCode != w.class {
			t.Errorf("payment batch %d header = %+v, want %+v", i, hd, w)
		}
		for _, e := range b.GetEntries() {
			byCode[e.TransactionCode] = e
		}
	}
	if e := byCode[nacha.CheckingDebit]; e != nil && e.PaymentTypeField() != "S" {
		t.Errorf("WEB debit payment type = %q, want S", e.PaymentTypeField())
	}
	if e := byCode[nacha.CheckingDebit]; e == nil || e.Amount != 2500 || strings.TrimSpace(e.DFIAccountNumber) != "000123456789" || !strings.HasPrefix(e.TraceNumber, "12104288") {
		t.Errorf("debit entry = %v", e)
	}
	if e := byCode[nacha.SavingsCredit]; e == nil || e.Amount != 1000 {
		t.Errorf("credit entry = %v", e)
	}
	// File totals match the entries; the sandbox's 7.00 and its deposits are not there.
	if f.Control.TotalDebitEntryDollarAmountInFile != 2500+offset || f.Control.TotalCreditEntryDollarAmountInFile != 1000+amounts[0]+amounts[1] ||
		f.Control.EntryAddendaCount != 5 || f.Control.BatchCount != 3 {
		t.Errorf("file control = %+v", f.Control)
	}

	// Nothing is sent twice.
	if again, err := o.Run(context.Background()); err != nil || len(again) != 0 {
		t.Errorf("second run wrote %v, %v", again, err)
	}

	// A production payment settles (processed, payment.success) after origination, without a return.
	h.Clock.Advance(7 * 24 * time.Hour)
	if _, err := h.Consequences.SettleDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+s.debit, s.key)); p["status"] != "processed" {
		t.Errorf("originated payment a week later = %v", p["status"])
	}
	if p := th.WantOK(t, h.Get("/v2/payments/"+s.credit, s.key)); p["status"] != "processed" {
		t.Errorf("originated credit a week later = %v", p["status"])
	}
	if n := len(h.Events("payment.success")); n != 3 { // the two production payments and the sandbox one
		t.Errorf("payment.success events = %d, want 3", n)
	}
}

func TestOriginationRewritesAFileLeftBuilding(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	dir := t.TempDir()
	blocked := filepath.Join(dir, "not-a-folder")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The write fails after the entries were assigned (as after a crash).
	if _, err := h.originator(achConfig(blocked)).Run(context.Background()); err == nil {
		t.Fatal("Run into a file instead of a folder succeeded")
	}
	outbox := filepath.Join(dir, "outbox")
	o := h.originator(achConfig(outbox))
	th.WantOK(t, h.Post("/v2/payments", s.key, th.DebitBody(s.verified, `"3.00"`))) // arrives meanwhile
	written, err := o.Run(context.Background())
	if err != nil || len(written) != 2 {
		t.Fatalf("recovery run = %v, %v (want the building file and a new one)", written, err)
	}
	traces := map[string]int{}
	total := 0
	for _, f := range readACH(t, outbox) {
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				traces[e.TraceNumber]++
				total++
			}
		}
	}
	// Five entries and the micro-deposit batch's offsetting debit.
	if total != 6 || len(traces) != 6 {
		t.Errorf("entries across files = %d (%d distinct), want 6 once each", total, len(traces))
	}
	if leftovers, _ := filepath.Glob(filepath.Join(outbox, ".*")); len(leftovers) != 0 {
		t.Errorf("temp files left in the outbox: %v", leftovers)
	}
}

func TestReturnFileFailsTheVerificationAndThePayment(t *testing.T) {
	t.Parallel()
	s := newACHSetup(t)
	h := s.h
	dir := t.TempDir()
	o := h.originator(achConfig(dir))
	if _, err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var depositTrace, creditTrace, debitTrace string
	for _, f := range readACH(t, dir) {
		for _, e := range f.Batches[0].GetEntries() {
			depositTrace = e.TraceNumber
		}
		for _, b := range f.Batches {
			if b.GetHeader().StandardEntryClassCode == "WEB" {
				debitTrace = b.GetEntries()[0].TraceNumber
			}
		}
		for _, e := range f.Batches[1].GetEntries() {
			if e.TransactionCode == nacha.SavingsCredit {
				creditTrace = e.TraceNumber
			}
		}
	}
	returns := h.returnFile(t, map[string]string{depositTrace: "R03", creditTrace: "R01", debitTrace: "R07", "121042889999999": "R02"})

	res, err := o.ImportReturns(context.Background(), bytes.NewReader(returns))
	if err != nil || res.Returns != 4 || res.Applied != 3 || len(res.Unknown) != 1 || res.Unknown[0] != "121042889999999" {
		t.Fatalf("ImportReturns = %+v, %v", res, err)
	}
	src := th.WantOK(t, h.Get("/v2/funding-source/"+s.unverified, s.key))
	if v := src["verification"].(map[string]any); v["status"] != "failed" || v["return_code"] != "R03" || v["attempts_remaining"] != float64(0) {
		t.Errorf("verification after an R03 = %v", v)
	}
	ev := h.Events("funding_source.verification_failed")
	if len(ev) != 1 || ev[0]["verification"].(map[string]any)["return_code"] != "R03" {
		t.Errorf("verification_failed events = %v", ev)
	}
	// The return policy: R03 removes the source, R07 blocks the debited one
	// and revokes its mandate.
	if src["removed"] != true || src["removed_reason"] != "return_R03" {
		t.Errorf("source after an R03 = %s", th.MustJSON(src))
	}
	if ev := h.Events("funding_source.removed"); len(ev) != 1 || ev[0]["return_code"] != "R03" {
		t.Errorf("funding_source.removed events = %v", ev)
	}
	blocked := th.WantOK(t, h.Get("/v2/funding-source/"+s.verified, s.key))
	if b, _ := blocked["block"].(map[string]any); b["code"] != "R07" || b["blocked_at"] == nil {
		t.Errorf("source after an R07 = %s", th.MustJSON(blocked))
	}
	debit := th.WantOK(t, h.Get("/v2/payments/"+s.debit, s.key))
	if m := th.WantOK(t, h.Get("/v2/mandates/"+debit["mandate_id"].(string), s.key)); m["status"] != "revoked" || m["revoke_reason"] != "return_R07" {
		t.Errorf("mandate after an R07 = %s", th.MustJSON(m))
	}
	th.WantError(t, h.Post("/v2/payments", s.key, th.DebitBody(s.verified, `"1.00"`)), http.StatusForbidden, "funding_source_blocked")
	p := th.WantOK(t, h.Get("/v2/payments/"+s.credit, s.key))
	if p["status"] != "failed" || p["failure_code"] != "R01" || p["failure_reason"] != "Insufficient funds" {
		t.Errorf("returned payment = %v", p)
	}
	if failed := h.Events("payment.failed"); len(failed) != 2 {
		t.Errorf("payment.failed events = %v", failed)
	}
	// The same file again: nothing more happens (the unknown trace's
	// return is kept unmatched once).
	res, err = o.ImportReturns(context.Background(), bytes.NewReader(returns))
	if err != nil || res.Applied != 0 || res.Duplicate != 4 {
		t.Errorf("second import = %+v, %v", res, err)
	}
	if n := len(h.Events("payment.failed")) + len(h.Events("funding_source.verification_failed")) + len(h.Events("funding_source.blocked")); n != 4 {
		t.Errorf("events after a second import = %d, want 4", n)
	}
}

// sent is what an answer from the bank echoes of an entry: its amount,
// account number and batch company identification.
type sent struct {
	cents   int
	account string
	company string
}

// sentEntry reads what the newest entry with a trace number was sent
// with; an unknown trace number gets made-up values (an answer for an
// entry sent elsewhere).
func (h *harness) sentEntry(t *testing.T, trace string) sent {
	t.Helper()
	return h.sentWhere(t, `e.trace_number = $1`, trace)
}

// sentPayment is a payment's trace number and what its entry was sent
// with.
func (h *harness) sentPayment(t *testing.T, paymentID string) (string, sent) {
	t.Helper()
	trace, _ := h.entryOf(t, paymentID)
	return trace, h.sentWhere(t, `e.payment_id = $1`, paymentID)
}

func (h *harness) sentWhere(t *testing.T, where, arg string) sent {
	t.Helper()
	var r struct {
		Merchant string  `db:"merchant_id"`
		Env      string  `db:"environment"`
		Source   string  `db:"funding_source_id"`
		Seq      *int    `db:"deposit_seq"`
		Index    *int    `db:"deposit_index"`
		Cents    *int64  `db:"amount_cents"`
		Company  *string `db:"company_id"`
	}
	err := h.SQL().Get(&r, `SELECT e.merchant_id, e.environment, e.funding_source_id, e.deposit_seq, e.deposit_index,
	       e.amount_cents, e.company_id FROM ach_entries e JOIN ach_files f ON f.id = e.file_id
	WHERE `+where+` ORDER BY f.created_at DESC, f.serial DESC LIMIT 1`, arg)
	if errors.Is(err, sql.ErrNoRows) {
		return sent{cents: 100, account: "1", company: "1234567890"}
	}
	if err != nil {
		t.Fatalf("entry of %s: %v", arg, err)
	}
	scope := tenant.Scope{MerchantID: r.Merchant, Env: tenant.Environment(r.Env)}
	acct, err := h.Funding.BankAccount(context.Background(), scope, r.Source)
	if err != nil {
		t.Fatalf("account of %s: %v", r.Source, err)
	}
	s := sent{account: acct.AccountNumber, company: "1234567890"}
	if r.Company != nil {
		s.company = *r.Company
	}
	switch {
	case r.Cents != nil:
		s.cents = int(*r.Cents)
	case r.Seq != nil:
		amounts, err := h.Funding.DepositAmounts(context.Background(), scope, r.Source, *r.Seq)
		if err != nil {
			t.Fatalf("deposit amounts of %s: %v", r.Source, err)
		}
		s.cents = amounts[*r.Index-1]
	}
	return s
}

// returnFile builds an ACH return file (as the bank sends it) with one
// return per original trace number, each echoing its newest entry's
// amount, account and company identification.
func (h *harness) returnFile(t *testing.T, codes map[string]string) []byte {
	t.Helper()
	traces := make([]string, 0, len(codes))
	for tr := range codes {
		traces = append(traces, tr)
	}
	sort.Strings(traces)
	rets := make([]ret, len(traces))
	for i, tr := range traces {
		rets[i] = ret{trace: tr, code: codes[tr], sent: h.sentEntry(t, tr)}
	}
	return returnsFile(t, rets)
}

// ret is one return of a return file: the original trace number, the
// code, and what it echoes of the entry.
type ret struct {
	trace, code string
	sent
}

// returnsFile builds a return file of rets, in a batch per company.
func returnsFile(t *testing.T, rets []ret) []byte {
	t.Helper()
	companies := make([]string, len(rets))
	for i, r := range rets {
		companies[i] = r.company
	}
	return answersFile(t, nacha.PPD, companies, func(i int, e *nacha.EntryDetail) {
		r := rets[i]
		e.DFIAccountNumber, e.Amount, e.IndividualName = r.account, r.cents, "RETURN"
		a := nacha.NewAddenda99()
		a.ReturnCode, a.OriginalTrace, a.OriginalDFI = r.code, r.trace, "12104288"
		e.Addenda99, e.Category, e.AddendaRecordIndicator = a, nacha.CategoryReturn, 1
	})
}

// answersFile writes answers from the bank, the i-th under companies[i]'s
// company identification, a batch of SEC code sec (PPD returns, COR
// notifications of change) per company as banks group them; fill writes
// each answer's own fields into its entry.
func answersFile(t *testing.T, sec string, companies []string, fill func(i int, e *nacha.EntryDetail)) []byte {
	t.Helper()
	batches := map[string]nacha.Batcher{}
	var order []string
	for i, company := range companies {
		batch := batches[company]
		if batch == nil {
			bh := nacha.NewBatchHeader()
			bh.ServiceClassCode = nacha.MixedDebitsAndCredits
			bh.CompanyName, bh.CompanyIdentification = "FUNDSOURCE", company
			bh.StandardEntryClassCode, bh.CompanyEntryDescription = sec, "RETURN"
			if sec == nacha.COR {
				bh.ServiceClassCode, bh.CompanyEntryDescription = nacha.CreditsOnly, "NOC"
			}
			bh.EffectiveEntryDate, bh.ODFIIdentification = "261105", "23138010"
			bh.BatchNumber = len(order) + 1
			var err error
			if batch, err = nacha.NewBatch(bh); err != nil {
				t.Fatal(err)
			}
			batches[company], order = batch, append(order, company)
		}
		e := nacha.NewEntryDetail()
		e.TransactionCode = nacha.CheckingReturnNOCCredit
		e.SetRDFI("121042882")
		e.SetTraceNumber("23138010", i+1)
		fill(i, e)
		batch.AddEntry(e)
	}
	list := make([]nacha.Batcher, len(order))
	for i, c := range order {
		list[i] = batches[c]
	}
	return bankFile(t, list...)
}

// bankFile writes batch into a file from the Federal Reserve to the
// originator, as returns and notifications of change arrive.
func bankFile(t *testing.T, batches ...nacha.Batcher) []byte {
	t.Helper()
	fh := nacha.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = "121042882", "231380104"
	fh.FileCreationDate, fh.FileCreationTime = "261105", "0900"
	fh.ImmediateDestinationName, fh.ImmediateOriginName = "FUNDSOURCE BANK", "FEDERAL RESERVE BANK"
	file := nacha.NewFile()
	file.SetHeader(fh)
	for _, batch := range batches {
		if err := batch.Create(); err != nil {
			t.Fatal(err)
		}
		file.AddBatch(batch)
	}
	data, err := ach.Encode(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
