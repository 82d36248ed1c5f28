package postgres_test

import (
	"context"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/migrations"
)

// entryBackfill is the version of the migration that fills the class and
// receiver of entries assigned before they were stored, found by its name.
func entryBackfill(t *testing.T) int64 {
	t.Helper()
	names, err := fs.Glob(migrations.FS, "*_backfill_entry_class_receiver.sql")
	if err != nil || len(names) != 1 {
		t.Fatalf("the entry backfill migration: %v, %v", names, err)
	}
	v, err := strconv.ParseInt(strings.SplitN(names[0], "_", 2)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// nameBeforeFold is how the code wrote the names and identification
// numbers of these entries when it built them: the backfill must write
// the same.
func nameBeforeFold(s string, n int) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(" .,-&'/", r):
			b.WriteRune(r)
		case r > 127:
			b.WriteByte(' ')
		}
	}
	out := strings.TrimSpace(b.String())
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// TestEntryBackfillWritesWhatOldEntriesWentOutWith stores entries as
// releases before classes and receivers were stored wrote them (NULLs),
// runs the backfill, and reads them back: PPD, described ACCTVERIFY or
// PAYMENT; the customer's name and the end of the source's id in the
// name alphabet of then (what NACHA allows kept, other ASCII dropped, any
// other character a space, trimmed, cut). An entry that has its values
// keeps them, and running the backfill again changes nothing.
func TestEntryBackfillWritesWhatOldEntriesWentOutWith(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := fixture.New(t)
	m := f.Merchant("Backfill")
	if _, err := f.ActivateProduction(ctx, m.Merchant.ID, audit.Operator("ops")); err != nil {
		t.Fatal(err)
	}
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	p, err := goose.NewProvider(goose.DialectPostgres, f.SQL().DB, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	// The customers are made on the newest schema: the store writes its
	// columns, some of which came after the backfill.
	customers := make([]string, 16)
	for i := range customers {
		customers[i] = f.Customer(scope)
	}
	version := entryBackfill(t)
	if _, err := p.DownTo(ctx, version-1); err != nil {
		t.Fatalf("down to %d: %v", version-1, err)
	}

	store := f.DB.ACH()
	file := ach.File{ID: "achf_backfill", Name: "fundsource-20261120-backfill.ach", Status: ach.StatusDelivered,
		CreatedAt: time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC)}
	// Written as that release wrote it: today's store writes columns that
	// came after.
	if _, err := f.SQL().ExecContext(ctx, `INSERT INTO ach_files (id, name, status, created_at) VALUES ($1, $2, $3, $4)`,
		file.ID, file.Name, file.Status, file.CreatedAt); err != nil {
		t.Fatal(err)
	}
	const source = "fs_0123456789abcdefxyz" // its last 15: 456789abcdefxyz
	if id := nameBeforeFold(source[len(source)-15:], 15); id != "456789ABCDEFXYZ" {
		t.Fatalf("the identification then was %q", id)
	}
	type want struct {
		class              ach.Class
		name, individualID string
	}
	ppd := func(description string) ach.Class { return ach.Class{SEC: ach.SecPPD, Description: description} }
	cases := []struct {
		label       string
		first, last string
		entry       ach.Entry // as stored; Trace, FileID, Scope, CustomerID and SourceID are set below
		want        want
	}{
		{"an old micro-deposit", "Ada", "Lovelace",
			ach.Entry{Kind: ach.KindMicroDeposit, DepositSeq: 1, DepositIndex: 1},
			want{ppd(ach.DescriptionMicroDeposits), "ADA LOVELACE", "456789ABCDEFXYZ"}},
		{"an old payment", "O'Brien & Sons,", "Ltd.",
			ach.Entry{Kind: ach.KindPayment, PaymentID: "pay_1", Debit: true, Cents: 100},
			want{ppd(ach.DescriptionPayments), "O'BRIEN & SONS, LTD.", "456789ABCDEFXYZ"}},
		{"marks: other characters are spaces, then trimmed", "Zoë", "Łukasz",
			ach.Entry{Kind: ach.KindPayment, PaymentID: "pay_2", Cents: 100},
			want{ppd(ach.DescriptionPayments), "ZO   UKASZ", "456789ABCDEFXYZ"}},
		{"control characters are dropped", "a\tb", "c\nd",
			ach.Entry{Kind: ach.KindPayment, PaymentID: "pay_3", Cents: 100},
			want{ppd(ach.DescriptionPayments), "AB CD", "456789ABCDEFXYZ"}},
		{"the two letters whose upper case is ASCII", "ıſ", "straße",
			ach.Entry{Kind: ach.KindPayment, PaymentID: "pay_4", Cents: 100},
			want{ppd(ach.DescriptionPayments), "IS STRA E", "456789ABCDEFXYZ"}},
		{"other ASCII is dropped", "A/B-2 Holdings #1", "(UK)",
			ach.Entry{Kind: ach.KindPayment, PaymentID: "pay_8", Cents: 100},
			want{ppd(ach.DescriptionPayments), "A/B-2 HOLDINGS 1 UK", "456789ABCDEFXYZ"}},
		{"cut at 22", "Alexandrina Victoria", "Hanover",
			ach.Entry{Kind: ach.KindPayment, PaymentID: "pay_5", Cents: 100},
			want{ppd(ach.DescriptionPayments), "ALEXANDRINA VICTORIA H", "456789ABCDEFXYZ"}},
		{"a class kept, the receiver filled", "Grace", "Hopper",
			ach.Entry{Kind: ach.KindPayment, PaymentID: "pay_6", Debit: true, Cents: 100, Class: ach.Class{SEC: ach.SecCCD, Description: ach.DescriptionPayments}},
			want{ach.Class{SEC: ach.SecCCD, Description: ach.DescriptionPayments}, "GRACE HOPPER", "456789ABCDEFXYZ"}},
		{"an entry that has both keeps them", "Someone", "Else",
			ach.Entry{Kind: ach.KindPayment, PaymentID: "pay_7", Debit: true, Cents: 100,
				Class:        ach.Class{SEC: ach.SecWEB, Description: ach.DescriptionPurchase, PaymentType: "S"},
				ReceiverName: "KEPT NAME", IndividualID: "KEPTID", Addenda: "ORDER 7"},
			want{ach.Class{SEC: ach.SecWEB, Description: ach.DescriptionPurchase, PaymentType: "S"}, "KEPT NAME", "KEPTID"}},
	}
	for i, c := range cases {
		if c.entry.ReceiverName == "" && nameBeforeFold(c.first+" "+c.last, 22) != c.want.name {
			t.Fatalf("%s: the name then was %q, not %q", c.label, nameBeforeFold(c.first+" "+c.last, 22), c.want.name)
		}
		customerID := customers[i]
		if _, err := f.SQL().Exec(`UPDATE customers SET first_name = $1, last_name = $2 WHERE id = $3`, c.first, c.last, customerID); err != nil {
			t.Fatal(err)
		}
		e := c.entry
		e.Trace, e.FileID, e.FileDate, e.Scope = "02100002"+strconv.Itoa(1000001+i), file.ID, "2026-11-20", scope
		e.CustomerID, e.SourceID = customerID, source
		if err := store.InsertACHEntry(ctx, e); err != nil {
			t.Fatalf("%s: %v", c.label, err)
		}
	}

	check := func(after string) []ach.Entry {
		t.Helper()
		got, err := store.ACHEntries(ctx, file.ID)
		if err != nil || len(got) != len(cases) {
			t.Fatalf("%s: %d entries, %v; want %d", after, len(got), err, len(cases))
		}
		for i, c := range cases {
			e := got[i]
			if g := (want{e.Class, e.ReceiverName, e.IndividualID}); g != c.want {
				t.Errorf("%s, %s: class %+v, receiver %q, id %q; want %+v", after, c.label, g.class, g.name, g.individualID, c.want)
			}
			if e.Addenda != c.entry.Addenda {
				t.Errorf("%s, %s: addenda %q, want %q", after, c.label, e.Addenda, c.entry.Addenda)
			}
		}
		return got
	}
	var stillNull int
	if err := f.SQL().Get(&stillNull, `SELECT count(*) FROM ach_entries WHERE sec_code IS NULL OR receiver_name IS NULL`); err != nil || stillNull != len(cases)-1 {
		t.Fatalf("old-shaped entries before the backfill = %d, %v; want %d", stillNull, err, len(cases)-1)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	first := check("after the backfill")

	// Run again (down is a no-op for the data): nothing changes.
	if _, err := p.DownTo(ctx, version-1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
	again := check("after a second run")
	for i := range first {
		if first[i].Class != again[i].Class || first[i].ReceiverName != again[i].ReceiverName || first[i].IndividualID != again[i].IndividualID {
			t.Errorf("%s changed on a second run: %+v, then %+v", cases[i].label, first[i], again[i])
		}
	}
}
