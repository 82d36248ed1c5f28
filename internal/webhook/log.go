package webhook

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// States of an event in the delivery log.
const (
	LogNotSent   = "not sent"  // no webhook URL was registered when it happened
	LogPending   = "pending"   // queued, not tried yet
	LogRetrying  = "retrying"  // tried, failed, will be tried again
	LogDelivered = "delivered" // a 2xx came back
	LogFailed    = "failed"    // every retry failed
	LogCanceled  = "canceled"  // the webhook was deleted before it got through
)

// LogEntry is one event of the delivery log with the state of its latest
// delivery.
type LogEntry struct {
	Event          event.Event
	DeliveryStatus string     // Pending, Delivered, Failed, Canceled; "" without a delivery
	Attempts       int        // HTTP attempts of the latest delivery
	LastStatusCode *int       // of the latest attempt; nil when none or no response
	LastLatencyMS  *int       // of the latest attempt, milliseconds
	NextAttemptAt  *time.Time // UTC, while pending
}

// State is the entry's state for people: one of the Log… constants.
func (e LogEntry) State() string { return State(e.DeliveryStatus, e.Attempts) }

// State is a delivery's state for people, from its stored status ("" for
// no delivery) and its attempts so far: one of the Log… constants.
func State(status string, attempts int) string {
	switch status {
	case "":
		return LogNotSent
	case Pending:
		if attempts > 0 {
			return LogRetrying
		}
		return LogPending
	case Delivered:
		return LogDelivered
	case Failed:
		return LogFailed
	}
	return LogCanceled
}

// Log returns a page of the delivery log, newest event first.
func (s *Service) Log(ctx context.Context, scope tenant.Scope, p paging.Page) ([]LogEntry, bool, error) {
	es, err := s.store.DeliveryLog(ctx, scope, p)
	return paging.Result(es, err, p)
}

// MaxSourceEvents is how many events SourceEvents returns at most.
const MaxSourceEvents = 50

// SourceEvents returns the newest events (at most MaxSourceEvents) about a
// funding source, newest first.
func (s *Service) SourceEvents(ctx context.Context, scope tenant.Scope, fundingSourceID string) ([]event.Event, error) {
	return s.store.SourceEvents(ctx, scope, fundingSourceID, MaxSourceEvents)
}
