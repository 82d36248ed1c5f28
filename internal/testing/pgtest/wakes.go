package pgtest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
)

// Woken opens a DB on url with its own pool (closed at the test's end), and a
// listener on the dispatchers' channel (postgres.DeliveryChannel): woken
// reports whether a wake-up arrived within d, and drains it. It returns
// once the listener is connected.
func Woken(t testing.TB, url string) (db *postgres.DB, woken func(d time.Duration) bool) {
	t.Helper()
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	wake := postgres.Listen(ctx, url, postgres.DeliveryChannel, slog.New(slog.DiscardHandler))
	select {
	case <-wake: // listening
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not connect")
	}
	return db, func(d time.Duration) bool {
		select {
		case <-wake:
			return true
		case <-time.After(d):
			return false
		}
	}
}
