// Package overview is the read model of the dashboard's Home charts: over
// the last 30 days, the verification funnel and the median time to verify
// by method, webhook delivery success and p95 latency by day, and the
// debit return rate by day. Each is one aggregate query per page view on
// indexes the service already keeps; the charts are drawn on the server
// as SVG with a table beside them, so they need no JavaScript.
package overview

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Days is how many days the overview covers, today included.
const Days = 30

// Method names how a source was verified: the method its verification
// recorded, or none when it was Verified at creation.
const (
	MicroDeposits = "micro-deposits" // two ACH amounts; also a source not yet initiated
	Instant       = "instant"        // one instant credit whose remittance carries a code
	AtCreation    = "at-creation"    // a processor token, or the merchant's own verification
)

// Methods are the funnels' methods in the order the overview shows them.
var Methods = []string{MicroDeposits, Instant, AtCreation}

// Funnel is one verification method's sources created in the window, how
// many started verifying, and how many are verified.
type Funnel struct {
	Method    string
	Created   int
	Initiated int
	Verified  int
	// MedianToVerify is the median time from creation to verified; 0
	// when none was verified.
	MedianToVerify time.Duration
}

// Day is one UTC day's webhook and debit figures.
type Day struct {
	Date                  time.Time // midnight UTC
	Attempts              int       // webhook delivery attempts
	Delivered             int       // of which answered 2xx
	P95LatencyMS          int       // of the attempts; 0 without attempts
	Debits                int       // debits created that day
	Returned              int       // of which came back with a return code
	DeliveryRate          float64   // Delivered / Attempts, 0 without attempts
	DebitReturnRate       float64   // Returned / Debits, 0 without debits
	HasWebhook, HasDebits bool      // whether the day had attempts, debits
}

// Stats is the overview of one scope.
type Stats struct {
	Funnels []Funnel // one per method, in the order of Methods
	Days    []Day    // oldest first, every day of the window
}

// Store reads the aggregates.
type Store interface {
	// VerificationFunnels returns the funnel of each method for sources
	// created since since.
	VerificationFunnels(ctx context.Context, scope tenant.Scope, since time.Time) ([]Funnel, error)
	// DailyActivity returns the days since since that had webhook attempts
	// or debits (Date, Attempts, Delivered, P95LatencyMS, Debits, Returned).
	DailyActivity(ctx context.Context, scope tenant.Scope, since time.Time) ([]Day, error)
}

// Service computes the overview.
type Service struct {
	store Store
	now   func() time.Time
}

// NewService returns a Service.
func NewService(store Store, now func() time.Time) *Service { return &Service{store: store, now: now} }

// Stats returns the scope's overview of the last Days days.
func (s *Service) Stats(ctx context.Context, scope tenant.Scope) (Stats, error) {
	today := s.now().UTC().Truncate(24 * time.Hour)
	since := today.AddDate(0, 0, -(Days - 1))
	funnels, err := s.store.VerificationFunnels(ctx, scope, since)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{}
	for _, m := range Methods {
		f := Funnel{Method: m}
		for _, got := range funnels {
			if got.Method == m {
				f = got
			}
		}
		st.Funnels = append(st.Funnels, f)
	}
	days, err := s.store.DailyActivity(ctx, scope, since)
	if err != nil {
		return Stats{}, err
	}
	byDate := map[time.Time]Day{}
	for _, d := range days {
		byDate[d.Date.UTC()] = d
	}
	for i := range Days {
		date := since.AddDate(0, 0, i)
		d := byDate[date]
		d.Date = date
		if d.Attempts > 0 {
			d.HasWebhook, d.DeliveryRate = true, float64(d.Delivered)/float64(d.Attempts)
		}
		if d.Debits > 0 {
			d.HasDebits, d.DebitReturnRate = true, float64(d.Returned)/float64(d.Debits)
		}
		st.Days = append(st.Days, d)
	}
	return st, nil
}
