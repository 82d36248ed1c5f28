package banksim

import (
	"testing"

	"github.com/fundsource/fundsource/internal/ach"
)

// TestStatementsBookEachBankingDayOnce: the network books a file on the
// banking day it settles (its debits' total a credit; the micro-deposit
// credits a debit, their on-us offset not at all), a file of returns on
// the day it writes it, each in a camt.053 the originator's parser reads;
// a step run again on the same day books nothing twice, and a weekend
// books nothing.
func TestStatementsBookEachBankingDayOnce(t *testing.T) {
	b := newBank()
	// Two micro-deposit credits of 12.00 with their offset, two WEB debits
	// (one to an R01 account), effective Tuesday 2026-11-03.
	data := outboxFile(t, "261103", []string{"5551111", "5551111"}, []string{"7770001", "7776789"}, nil)
	b.x.Put("fundsource-20261102-a.ach", data)
	step := func(date string) Summary { t.Helper(); return b.step(t, date) }
	read := func(name string) []ach.StatementLine {
		t.Helper()
		file, err := ach.ParseStatement(b.inbox(t, name), Account("121042882"))
		if err != nil {
			t.Fatal(err)
		}
		if len(file.Statements) != 1 {
			t.Fatalf("statements = %+v, want one", file.Statements)
		}
		return file.Statements[0].Lines
	}
	if sum := step("2026-11-02"); len(sum.Statements) != 0 {
		t.Errorf("before the effective date: %v", sum.Statements)
	}
	sum := step("2026-11-03")
	if len(sum.Statements) != 1 {
		t.Fatalf("effective date: %+v", sum)
	}
	lines := read(sum.Statements[0])
	if len(lines) != 2 || lines[0].Direction != ach.DirectionDebit || lines[0].Cents != 2400 ||
		lines[1].Direction != ach.DirectionCredit || lines[1].Cents != 2400 || lines[0].Date != "2026-11-03" {
		t.Errorf("statement of the effective date = %+v", lines)
	}
	if sum := step("2026-11-03"); len(sum.Statements) != 0 {
		t.Errorf("the same day again: %v", sum.Statements)
	}
	sum = step("2026-11-05") // the R01 comes back
	if len(sum.Written) != 1 || len(sum.Statements) != 1 {
		t.Fatalf("return day: %+v", sum)
	}
	if lines := read(sum.Statements[0]); len(lines) != 1 || lines[0].Direction != ach.DirectionDebit || lines[0].Cents != 1200 || lines[0].Date != "2026-11-05" {
		t.Errorf("statement of the return day = %+v", lines)
	}
	for _, d := range []string{"2026-11-05", "2026-11-07", "2026-11-09"} {
		if sum := step(d); len(sum.Statements) != 0 {
			t.Errorf("%s: %v", d, sum.Statements)
		}
	}
}
