package postgres

import (
	"context"
	"log/slog"
	"time"

	"github.com/lib/pq"
)

// Listen subscribes to a notification channel with lib/pq's Listener and
// returns a channel that fires (coalesced) for every notification and after
// every reconnection, when notifications may have been missed. It stops
// when ctx ends. Callers poll as well: a notification is only a hint.
func Listen(ctx context.Context, databaseURL, channel string, log *slog.Logger) <-chan struct{} {
	wake := make(chan struct{}, 1)
	fire := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	l := pq.NewListener(withConnectTimeout(databaseURL), 100*time.Millisecond, 10*time.Second,
		func(ev pq.ListenerEventType, err error) {
			switch ev {
			case pq.ListenerEventReconnected:
				fire()
			case pq.ListenerEventConnectionAttemptFailed, pq.ListenerEventDisconnected:
				if err != nil && ctx.Err() == nil {
					log.Debug("notification listener", slog.String("channel", channel), slog.Any("error", err))
				}
			}
		})
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	go func() {
		// Listen waits for the first connection; the listener reconnects
		// (and re-listens) by itself, and until then the caller's polling covers.
		if err := l.Listen(channel); err != nil {
			if ctx.Err() == nil {
				log.Warn("notification listener failed", slog.String("channel", channel), slog.Any("error", err))
			}
			return
		}
		fire()
		for n := range l.Notify {
			_ = n // nil after a reconnection; either way, look
			fire()
		}
	}()
	return wake
}
