package postgres

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/lib/pq"
)

// KeyChannel carries a notification whenever an API key or a merchant
// environment changes (a trigger sends it, whoever writes); servers clear
// their key cache on it.
const KeyChannel = "api_keys_changed"

// listenerMaxBackoff bounds the wait between a listener's reconnection
// attempts: a failover takes seconds, and an attempt costs the server a
// connection attempt.
const listenerMaxBackoff = 2 * time.Second

// Subscription is a LISTEN on one channel through lib/pq's Listener.
type Subscription struct {
	connected atomic.Bool
}

// Connected reports whether notifications are being received now: the
// channel is listened to on a live connection.
func (s *Subscription) Connected() bool { return s.connected.Load() }

// Subscribe listens on channel until ctx ends. onChange runs (on the
// listener's goroutine) for every notification, and after every
// (re)connection, when notifications may have been missed.
//
// The listener connects through ConnString, so with several hosts it
// listens on the primary, and when its connection drops (the primary
// died or stepped down) it reconnects, within listenerMaxBackoff of a
// primary being back, to whichever host is primary then.
func Subscribe(ctx context.Context, databaseURL, channel string, log *slog.Logger, onChange func()) *Subscription {
	s := &Subscription{}
	l := pq.NewListener(connString(databaseURL), 100*time.Millisecond, listenerMaxBackoff,
		func(ev pq.ListenerEventType, err error) {
			switch ev {
			case pq.ListenerEventReconnected:
				// lib/pq has listened again before it reports this.
				onChange()
				s.connected.Store(true)
			case pq.ListenerEventConnectionAttemptFailed, pq.ListenerEventDisconnected:
				s.connected.Store(false)
				if err != nil && ctx.Err() == nil {
					log.Debug("notification listener", slog.String("channel", channel), slog.Any("error", err))
				}
			}
		})
	go func() {
		<-ctx.Done()
		s.connected.Store(false)
		l.Close()
	}()
	go func() {
		// Listen waits for the first connection; the listener reconnects
		// (and re-listens) by itself.
		if err := l.Listen(channel); err != nil {
			if ctx.Err() == nil {
				log.Warn("notification listener failed", slog.String("channel", channel), slog.Any("error", err))
			}
			return
		}
		onChange()
		s.connected.Store(true)
		for range l.Notify {
			onChange() // a nil notification follows a reconnection; either way, look
		}
	}()
	return s
}

// Listen is Subscribe for a worker that polls as well: the channel it
// returns fires (coalesced) for every notification and after every
// reconnection. A notification is only a hint.
func Listen(ctx context.Context, databaseURL, channel string, log *slog.Logger) <-chan struct{} {
	wake := make(chan struct{}, 1)
	Subscribe(ctx, databaseURL, channel, log, func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	return wake
}
