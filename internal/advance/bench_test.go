package advance_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// BenchmarkAdvance60Days is one advance over sixty days of a clock with
// 100 customers, each with a Verified source, a debit, a credit and a
// monthly subscription; one account in 25 comes back R01, under the
// return-rate thresholds that would hold the originator's debits.
func BenchmarkAdvance60Days(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		c := newClocked(b)
		start := c.at(fixture.Start)
		for i := range 100 {
			account := fmt.Sprintf("7%07d", i*10+5)
			if i%25 == 0 {
				account = fmt.Sprintf("7%03d0001", i)
			}
			cu := c.customer // the clock's first; a clock carries at most 100
			if i > 0 {
				cu = c.customerOnClock()
			}
			src := c.verifiedSourceOf(start, cu, account)
			c.debit(start, src, "12.34")
			c.credit(start, src, "5.00")
			c.subscribe(start, src, "9.99")
		}
		to := fixture.Start.AddDate(0, 0, 60)
		b.StartTimer()
		began := time.Now()
		c.advance(to)
		b.ReportMetric(time.Since(began).Seconds(), "s/advance")
		var open, failed, processed int
		if err := c.SQL().QueryRow(`SELECT count(*) FILTER (WHERE status IN ('pending', 'held')), count(*) FILTER (WHERE status = 'failed'),
			count(*) FILTER (WHERE status = 'processed') FROM payments`).Scan(&open, &failed, &processed); err != nil {
			b.Fatal(err)
		}
		// 100 debits, 100 credits, 200 subscription debits: the R01
		// accounts' debits fail, the rest settle.
		if open != 0 || failed < 4 || processed < 370 {
			b.Fatalf("after sixty days: %d pending or held, %d failed, %d processed", open, failed, processed)
		}
	}
}
