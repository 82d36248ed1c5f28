package ach

import (
	"testing"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/funding"
)

// TestCorrectionReadsEachChangeCode reads the corrected data of each change
// code a source takes as moov-io/ach writes it, and refuses a transaction
// code that names no checking or savings account.
func TestCorrectionReadsEachChangeCode(t *testing.T) {
	for _, c := range []struct {
		code string
		data nacha.CorrectedData
		want funding.CorrectedData
	}{
		{"C01", nacha.CorrectedData{AccountNumber: "0012345"}, funding.CorrectedData{AccountNumber: "0012345"}},
		{"C02", nacha.CorrectedData{RoutingNumber: "021000021"}, funding.CorrectedData{RoutingNumber: "021000021"}},
		{"C03", nacha.CorrectedData{RoutingNumber: "021000021", AccountNumber: "987654"}, funding.CorrectedData{RoutingNumber: "021000021", AccountNumber: "987654"}},
		{"C05", nacha.CorrectedData{TransactionCode: nacha.SavingsCredit}, funding.CorrectedData{AccountType: funding.Savings}},
		{"C06", nacha.CorrectedData{AccountNumber: "55554444", TransactionCode: nacha.CheckingDebit}, funding.CorrectedData{AccountNumber: "55554444", AccountType: funding.Checking}},
		{"C07", nacha.CorrectedData{RoutingNumber: "026009593", AccountNumber: "1234", TransactionCode: nacha.SavingsDebit}, funding.CorrectedData{RoutingNumber: "026009593", AccountNumber: "1234", AccountType: funding.Savings}},
	} {
		a := nacha.NewAddenda98()
		a.ChangeCode, a.OriginalTrace, a.CorrectedData = c.code, "121042880000001", nacha.WriteCorrectionData(c.code, &c.data)
		got, err := correction(a)
		if err != nil || got.CorrectedData != c.want || got.ChangeCode != c.code || got.OriginalTrace != "121042880000001" {
			t.Errorf("%s: %+v, %v; want %+v", c.code, got, err, c.want)
		}
	}
	a := nacha.NewAddenda98()
	a.ChangeCode, a.CorrectedData = "C05", nacha.WriteCorrectionData("C05", &nacha.CorrectedData{TransactionCode: 42})
	if _, err := correction(a); err == nil {
		t.Error("a C05 to transaction code 42 was read")
	}
}
