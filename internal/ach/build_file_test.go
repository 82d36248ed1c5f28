package ach

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

// accounts is the funding service's answer for the accounts of a file,
// by source id.
type accounts map[string]funding.BankAccount

func (a accounts) BankAccount(_ context.Context, _ tenant.Scope, id string) (funding.BankAccount, error) {
	acct, ok := a[id]
	if !ok {
		return funding.BankAccount{}, fmt.Errorf("no source %s", id)
	}
	return acct, nil
}

// DepositAmounts are the sealed amounts of the one verification the
// tests originate.
func (accounts) DepositAmounts(_ context.Context, _ tenant.Scope, id string, seq int) ([2]int, error) {
	if id != "fs_checking" || seq != 1 {
		return [2]int{}, fmt.Errorf("no verification %s/%d", id, seq)
	}
	return [2]int{12, 87}, nil
}

func (accounts) ReturnMicroDepositTx(context.Context, funding.Store, tenant.Scope, string, int, string) error {
	return nil
}

// AccountFingerprint, SealRecord and OpenRecord stand in for the vault's:
// these tests build files and keep no answers.
func (accounts) AccountFingerprint(number string) []byte { return []byte("fp:" + number) }

func (accounts) SealRecord(record []byte, _ string) (string, []byte) { return "k", record }

func (accounts) OpenRecord(_ string, sealed []byte, _ string) ([]byte, error) { return sealed, nil }

func (accounts) CancelDepositsTx(context.Context, funding.Store, tenant.Scope, string, int) error {
	return nil
}

func (accounts) ApplyChangeTx(context.Context, funding.Store, tenant.Scope, string, funding.Correction) (bool, error) {
	return false, nil
}

// Receiver answers a source's holder: sources named fs_co* are
// companies'.
func (accounts) Receiver(_ context.Context, _ tenant.Scope, id string) (funding.Receiver, error) {
	return funding.Receiver{Company: len(id) > 5 && id[:5] == "fs_co", Name: "Ada Lovelace", IndividualID: "ID" + id, Addenda: true}, nil
}

func (accounts) BlockTx(context.Context, funding.Store, tenant.Scope, string, string, string) (bool, error) {
	return false, nil
}

var testConfig = Config{Dir: "unused", ODFIRouting: "021000021", DestinationRouting: "011000015",
	DestinationName: "Federal Reserve Bank", OriginName: "fundsource", CompanyName: "Acme Payments", CompanyID: "1234567890",
	MicroOffset: true, OffsetAccount: "55500011"}

// TestBuildParsesBackWithEveryEntry builds a file with a verification's
// two credits (their amounts read sealed, not from the entries) and
// payments of every class, reads it back with moov-io/ach, and checks
// every batch's SEC code, description, service class and balance, and
// each entry; a second build gives the same bytes.
func TestBuildParsesBackWithEveryEntry(t *testing.T) {
	scope := tenant.Scope{MerchantID: "mer_1", Env: tenant.Production}
	o := NewOriginator(testConfig, nil, accounts{
		"fs_checking": {RoutingNumber: "021000021", AccountNumber: "000123456789", AccountType: funding.Checking},
		"fs_savings":  {RoutingNumber: "011000015", AccountNumber: "9876", AccountType: funding.Savings},
	}, nil, nil, time.Now)
	// Friday evening in New York: the effective date is the next business day, Monday.
	f := File{ID: "achf_1", Serial: 2, Name: "f.ach", CreatedAt: time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC),
		OffsetTraces: []string{"021000020000009"}}
	deposit := Classify(Payer{MicroDeposit: true})
	purchase, recurring := Classify(Payer{Debit: true, Purpose: payment.PurposeGoods}), Classify(Payer{Debit: true, Subscription: true, Purpose: payment.PurposeGoods})
	retry := Classify(Payer{Debit: true, Subscription: true, Retry: true})
	entries := []Entry{
		{Trace: "021000020000001", Scope: scope, Kind: KindMicroDeposit, SourceID: "fs_checking", CustomerID: "cus_ada", ReceiverName: "ADA LOVELACE", IndividualID: "FSCHECKING", DepositSeq: 1, DepositIndex: 1, Class: deposit},
		{Trace: "021000020000002", Scope: scope, Kind: KindMicroDeposit, SourceID: "fs_checking", CustomerID: "cus_ada", ReceiverName: "ADA LOVELACE", IndividualID: "FSCHECKING", DepositSeq: 1, DepositIndex: 2, Class: deposit},
		{Trace: "021000020000003", Scope: scope, Kind: KindPayment, SourceID: "fs_savings", CustomerID: "cus_bob", ReceiverName: "BOB LOVELACE", IndividualID: "FSSAVINGS", PaymentID: "pay_0123456789abcdefXYZ", Debit: true, Cents: 125000, Class: purchase},
		{Trace: "021000020000004", Scope: scope, Kind: KindPayment, SourceID: "fs_checking", CustomerID: "cus_ada", ReceiverName: "ADA LOVELACE", IndividualID: "FSCHECKING", PaymentID: "pay_2", Cents: 5, Class: Classify(Payer{})},
		{Trace: "021000020000005", Scope: scope, Kind: KindPayment, SourceID: "fs_checking", CustomerID: "cus_ada", ReceiverName: "ADA LOVELACE", IndividualID: "FSCHECKING", PaymentID: "pay_3", Debit: true, Cents: 700, Class: Classify(Payer{Business: true, Debit: true})},
		{Trace: "021000020000006", Scope: scope, Kind: KindPayment, SourceID: "fs_checking", CustomerID: "cus_ada", ReceiverName: "ADA LOVELACE", IndividualID: "FSCHECKING", PaymentID: "pay_4", Debit: true, Cents: 999, Class: recurring},
		{Trace: "021000020000007", Scope: scope, Kind: KindPayment, SourceID: "fs_savings", CustomerID: "cus_bob", ReceiverName: "BOB LOVELACE", IndividualID: "FSSAVINGS", PaymentID: "pay_5", Debit: true, Cents: 999, Class: retry},
		// The reversal of pay_4: a credit, as pay_4 went but described REVERSAL.
		{Trace: "021000020000008", Scope: scope, Kind: KindPayment, SourceID: "fs_checking", CustomerID: "cus_ada", ReceiverName: "ADA LOVELACE", IndividualID: "FSCHECKING", PaymentID: "pay_6", Cents: 999,
			Class: Class{SEC: recurring.SEC, Description: DescriptionReversal, PaymentType: recurring.PaymentType}},
	}
	data, err := o.build(context.Background(), f, entries, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := o.build(context.Background(), f, entries, nil)
	if err != nil || !bytes.Equal(data, again) {
		t.Errorf("a second build differs (%v)", err)
	}
	file, err := nacha.NewReader(bytes.NewReader(data)).Read()
	if err != nil {
		t.Fatalf("the file does not parse back: %v\n%s", err, data)
	}
	if err := file.Validate(); err != nil {
		t.Errorf("the file does not validate: %v", err)
	}
	if file.Header.ImmediateOrigin != "021000021" || file.Header.ImmediateDestination != "011000015" || file.Header.FileIDModifier != "C" {
		t.Errorf("file header: origin %q, destination %q, modifier %q", file.Header.ImmediateOrigin, file.Header.ImmediateDestination, file.Header.FileIDModifier)
	}
	type want struct {
		code     int
		account  string
		cents    int
		name, id string
		trace    string
		payType  string // WEB only
	}
	batches := []struct {
		sec, description string
		class            int
		entries          []want
	}{
		{nacha.PPD, DescriptionMicroDeposits, nacha.MixedDebitsAndCredits, []want{
			{nacha.CheckingCredit, "000123456789", 12, "ADA LOVELACE", "FSCHECKING", "021000020000001", ""},
			{nacha.CheckingCredit, "000123456789", 87, "ADA LOVELACE", "FSCHECKING", "021000020000002", ""},
			{nacha.CheckingDebit, "55500011", 99, "ACME PAYMENTS", "OFFSET", "021000020000009", ""},
		}},
		{nacha.CCD, DescriptionPayments, nacha.DebitsOnly, []want{
			{nacha.CheckingDebit, "000123456789", 700, "ADA LOVELACE", "FSCHECKING", "021000020000005", ""},
		}},
		{nacha.PPD, DescriptionPayments, nacha.CreditsOnly, []want{
			{nacha.CheckingCredit, "000123456789", 5, "ADA LOVELACE", "FSCHECKING", "021000020000004", ""},
		}},
		{nacha.WEB, DescriptionPurchase, nacha.DebitsOnly, []want{
			{nacha.SavingsDebit, "9876", 125000, "BOB LOVELACE", "FSSAVINGS", "021000020000003", "S"},
			{nacha.CheckingDebit, "000123456789", 999, "ADA LOVELACE", "FSCHECKING", "021000020000006", "R"},
		}},
		{nacha.WEB, DescriptionRetry, nacha.DebitsOnly, []want{
			{nacha.SavingsDebit, "9876", 999, "BOB LOVELACE", "FSSAVINGS", "021000020000007", "R"},
		}},
		{nacha.WEB, DescriptionReversal, nacha.CreditsOnly, []want{
			{nacha.CheckingCredit, "000123456789", 999, "ADA LOVELACE", "FSCHECKING", "021000020000008", "R"},
		}},
	}
	if len(file.Batches) != len(batches) {
		t.Fatalf("%d batches, want %d", len(file.Batches), len(batches))
	}
	for i, b := range batches {
		h := file.Batches[i].GetHeader()
		if h.StandardEntryClassCode != b.sec || h.CompanyEntryDescription != b.description || h.ServiceClassCode != b.class ||
			h.EffectiveEntryDate != "261123" || h.CompanyName != "ACME PAYMENTS" {
			t.Errorf("batch %d header: %s %q class %d effective %s company %q; want %s %q class %d", i, h.StandardEntryClassCode,
				h.CompanyEntryDescription, h.ServiceClassCode, h.EffectiveEntryDate, h.CompanyName, b.sec, b.description, b.class)
		}
		got := file.Batches[i].GetEntries()
		if len(got) != len(b.entries) {
			t.Fatalf("batch %d: %d entries, want %d", i, len(got), len(b.entries))
		}
		debits, credits := 0, 0
		for j, w := range b.entries {
			e := got[j]
			if e.TransactionCode != w.code || e.DFIAccountNumberField() != fmt.Sprintf("%-17s", w.account) || e.Amount != w.cents ||
				e.IndividualName != fmt.Sprintf("%-22s", w.name) || e.TraceNumber != w.trace ||
				e.IdentificationNumber != fmt.Sprintf("%-15s", w.id) || (w.payType != "" && e.PaymentTypeField() != w.payType) {
				t.Errorf("batch %d entry %d: code %d account %q amount %d name %q id %q trace %s type %q; want %+v",
					i, j, e.TransactionCode, e.DFIAccountNumberField(), e.Amount, e.IndividualName, e.IdentificationNumber,
					e.TraceNumber, e.DiscretionaryData, w)
			}
			if e.CreditOrDebit() == "D" {
				debits += e.Amount
			} else {
				credits += e.Amount
			}
		}
		c := file.Batches[i].GetControl()
		if c.TotalDebitEntryDollarAmount != debits || c.TotalCreditEntryDollarAmount != credits {
			t.Errorf("batch %d control: debits %d credits %d, entries sum to %d and %d",
				i, c.TotalDebitEntryDollarAmount, c.TotalCreditEntryDollarAmount, debits, credits)
		}
		if b.description == DescriptionMicroDeposits && debits != credits {
			t.Errorf("micro-deposit batch does not balance: debits %d, credits %d", debits, credits)
		}
	}
}

func TestBuildRefusesAnUnknownSource(t *testing.T) {
	o := NewOriginator(testConfig, nil, accounts{}, nil, nil, time.Now)
	_, err := o.build(context.Background(), File{CreatedAt: time.Now()}, []Entry{{Trace: "021000020000001", Kind: KindPayment, SourceID: "fs_gone", PaymentID: "pay_1", Cents: 1}}, nil)
	if err == nil {
		t.Fatal("a file was built for an entry whose account cannot be read")
	}
}

func TestConfigValidate(t *testing.T) {
	ok := testConfig
	if err := ok.Validate(); err != nil {
		t.Fatalf("a complete config: %v", err)
	}
	for name, change := range map[string]func(*Config){
		"no folder":            func(c *Config) { c.Dir = "" },
		"bad ODFI check digit": func(c *Config) { c.ODFIRouting = "021000022" },
		"short destination":    func(c *Config) { c.DestinationRouting = "01100001" },
		"no company name":      func(c *Config) { c.CompanyName = "" },
		"long company name":    func(c *Config) { c.CompanyName = "Seventeen chars!!" },
		"long company id":      func(c *Config) { c.CompanyID = "12345678901" },
		"offset, no account":   func(c *Config) { c.OffsetAccount = "" },
	} {
		c := testConfig
		change(&c)
		if c.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
