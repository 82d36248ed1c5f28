package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync"
	"time"
)

// WakeStatement is the statement that wakes the dispatchers. It runs on
// the waker's own connection, outside any request.
const WakeStatement = `SELECT pg_notify('` + DeliveryChannel + `', '')`

// waker sends the notification that wakes the dispatchers
// (DeliveryChannel) after a transaction that queued webhook deliveries has
// committed, in a statement of its own.
//
// The transaction does not notify itself: PostgreSQL serializes every
// transaction that notifies, under one lock held until its commit is
// flushed to disk, so with a NOTIFY in each event's transaction every
// event-writing commit in the database would wait for the one before it.
// A statement that only notifies writes no WAL, so it holds that lock for
// an instant.
//
// Notifications are coalesced: while one is being sent, any number of
// commits ask for at most one more, sent after it, so every commit is
// followed by a notification that starts after it. If the process dies
// between a commit and its notification, the dispatchers' poll (every
// second) finds the delivery. The notifications go through a connection
// of their own, so they never take one from the requests' pool.
type waker struct {
	connector driver.Connector
	mu        sync.Mutex
	started   bool
	closed    bool
	kick      chan struct{}
	done      chan struct{}
}

func newWaker(c driver.Connector) *waker {
	return &waker{connector: c, kick: make(chan struct{}, 1), done: make(chan struct{})}
}

// wake asks for a notification; it never blocks.
func (db *DB) wake() {
	w := db.waker
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if !w.started {
		w.started = true
		go db.notifyLoop()
	}
	select {
	case w.kick <- struct{}{}:
	default: // one is already asked for
	}
}

func (db *DB) notifyLoop() {
	w := db.waker
	defer close(w.done)
	conn := sql.OpenDB(w.connector)
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	for range w.kick {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		// A failure is left to the dispatchers' poll.
		_, _ = conn.ExecContext(ctx, WakeStatement)
		cancel()
	}
}

// closeWaker sends the notification still asked for, then stops.
func (db *DB) closeWaker() {
	w := db.waker
	w.mu.Lock()
	started := w.started && !w.closed
	if !w.closed {
		w.closed = true
		close(w.kick)
	}
	w.mu.Unlock()
	if started {
		<-w.done
	}
}
