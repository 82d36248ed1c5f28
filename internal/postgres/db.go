// Package postgres holds every SQL statement of the service. A store
// method runs where its receiver does: on the pool (DB) or in one
// transaction (the Tx that WithTx hands its function). Each domain gets
// its Store from here (DB.Funding, Tx.Payments, ...), whose WithTx hands
// the use case that domain's store on the transaction, so one use case is
// one transaction, an event row commits with its change, and the
// transaction a write joins is named where it is made (tx.SetStatus(...)).
// Nothing travels in the context but deadlines.
//
// An idempotent request is one transaction too (Idempotent): the claim on
// its key, its writes and its stored response commit together. The one
// exception is a keyed creation (CreateSourceKeyed), which is a whole
// request in one statement, written together with concurrent creations
// (batch.go).
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/migrations"
)

// DB is the service's PostgreSQL store. It implements the domain packages'
// Store interfaces.
type DB struct {
	queries
	x *sqlx.DB
	// waker notifies the dispatchers after commits that queued deliveries.
	waker *waker
	// creations gathers concurrent requests' creations into batches,
	// which batchX writes (see openBatchPool).
	creations *batches[*creation]
	batchX    *sqlx.DB
}

// Open connects to databaseURL (a postgres:// URL or key=value DSN) and checks
// the connection. A connect_timeout of 5 s is added when none is given.
func Open(ctx context.Context, databaseURL string) (*DB, error) {
	db, err := open(databaseURL)
	if err != nil {
		return nil, err
	}
	x := db.x
	db.Reserve(0)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := x.PingContext(pctx); err != nil {
		x.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return db, nil
}

// OpenLazy is Open without the initial ping: the pool connects on first use.
// Used where the service must start (and answer 503) while the database is down.
func OpenLazy(databaseURL string) (*DB, error) {
	return open(databaseURL)
}

// open makes the pool, whose connections keep their statements prepared
// (see preparingConnector), and the dispatchers' waker, which has a
// connection of its own.
func open(databaseURL string) (*DB, error) {
	c, err := newPreparingConnector(withConnectTimeout(databaseURL))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	bc, err := newPreparingConnector(withConnectTimeout(databaseURL), genericPlans)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db := &DB{x: sqlx.NewDb(sql.OpenDB(c), "postgres"), waker: newWaker(c)}
	db.queries = queries{ex: db.x, db: db}
	db.creations = newCreations(db)
	db.batchX = sqlx.NewDb(sql.OpenDB(bc), "postgres")
	db.batchX.SetMaxOpenConns(creationBatches)
	db.batchX.SetMaxIdleConns(creationBatches)
	for _, x := range []*sqlx.DB{db.x, db.batchX} {
		x.SetConnMaxIdleTime(5 * time.Minute)
		x.SetConnMaxLifetime(time.Hour)
	}
	return db, nil
}

func withConnectTimeout(dsn string) string {
	if strings.Contains(dsn, "connect_timeout") {
		return dsn
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			q := u.Query()
			q.Set("connect_timeout", "5")
			u.RawQuery = q.Encode()
			return u.String()
		}
		return dsn
	}
	return dsn + " connect_timeout=5"
}

// APIConns is how many pooled connections requests may use at once,
// whatever background work holds.
const APIConns = 32

// Reserve grows the pool by n connections for background work (the
// webhook dispatcher's claims and records, the sweeps), so requests keep
// APIConns.
func (db *DB) Reserve(n int) {
	db.x.SetMaxOpenConns(APIConns + n)
	db.x.SetMaxIdleConns(APIConns + n)
}

// Close sends the dispatchers' pending notification, if any, and closes
// the pool.
func (db *DB) Close() error {
	db.closeWaker()
	return errors.Join(db.x.Close(), db.batchX.Close())
}

// Ping checks that the database answers (for /readyz).
func (db *DB) Ping(ctx context.Context) error { return translate(db.x.PingContext(ctx)) }

// Migrate applies every pending migration. A PostgreSQL session lock makes
// concurrent migrators (several processes starting at once) take turns.
func Migrate(ctx context.Context, x *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, x, migrations.FS, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Migrate applies pending migrations to db.
func (db *DB) Migrate(ctx context.Context) error { return Migrate(ctx, db.x.DB) }

// queries are the store's statements, run on one executor: the pool (DB)
// or one transaction (the store WithTx hands its function). Every store
// method is a method of queries, so the same method runs on either, and
// which one is visible where it is called: db.Source(...) on the pool,
// tx.Source(...) in tx.
type queries struct {
	ex sqlx.ExtContext
	db *DB
	tx *txState // nil on the pool
}

// Tx is the store on one open transaction.
type Tx struct{ queries }

type txState struct {
	tx    *sqlx.Tx
	depth int
	// queued is set when a statement of the transaction queued webhook
	// deliveries: the dispatchers are woken once it commits.
	queued bool
}

// begin begins a transaction.
func (db *DB) begin(ctx context.Context) (queries, error) {
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return queries{}, translate(err)
	}
	return queries{ex: tx, db: db, tx: &txState{tx: tx}}, nil
}

// commit commits q's transaction and wakes the dispatchers when it queued
// deliveries.
func (q queries) commit() error {
	if err := q.tx.tx.Commit(); err != nil {
		return translate(err)
	}
	if q.tx.queued {
		q.db.wake()
	}
	return nil
}

// queued records that the statement just run queued n webhook deliveries:
// when n > 0, the dispatchers are woken after its transaction commits, or
// at once when it ran on the pool (see waker).
func (q queries) queued(n int) {
	switch {
	case n <= 0:
	case q.tx != nil:
		q.tx.queued = true
	default:
		q.db.wake()
	}
}

// withTx runs fn on a transaction: on the pool it begins one, rolls it
// back when fn fails and commits it otherwise; in a transaction it runs fn
// under a savepoint, so a failing inner use case undoes only its own
// writes.
func (q queries) withTx(ctx context.Context, fn func(tx queries) error) error {
	if st := q.tx; st != nil {
		st.depth++
		defer func() { st.depth-- }()
		sp := fmt.Sprintf("sp%d", st.depth)
		if _, err := st.tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
			return translate(err)
		}
		if err := fn(q); err != nil {
			if _, rerr := st.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp); rerr != nil {
				return errors.Join(err, translate(rerr))
			}
			return err
		}
		_, err := st.tx.ExecContext(ctx, "RELEASE SAVEPOINT "+sp)
		return translate(err)
	}
	tx, err := q.db.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.tx.tx.Rollback() //nolint:errcheck // no-op after commit
	if err := fn(tx); err != nil {
		return err
	}
	return tx.commit()
}

// WithTx runs fn in a transaction (under a savepoint when called on a Tx).
func (q queries) WithTx(ctx context.Context, fn func(tx Tx) error) error {
	return q.withTx(ctx, func(tx queries) error { return fn(Tx{tx}) })
}

// translate turns driver errors into domain errors, in one place:
// no rows → errs.NotFound, unique violation → errs.Conflict, an unreachable
// or restarting database → errs.ServiceUnavailable. The cause stays wrapped
// for logs.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errs.As(err); ok {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %w", errs.New(errs.NotFound, "not found"), err)
	}
	if unavailable(err) {
		return fmt.Errorf("%w: %w", errs.New(errs.ServiceUnavailable, "The service is temporarily unavailable; retry shortly."), err)
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch pqErr.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%w: %w", errs.New(errs.Conflict, "already exists"), err)
		case "22021", "22P05": // character_not_in_repertoire (NUL, bad UTF-8), untranslatable_character
			// The edges refuse such text first; this is the net below them.
			return fmt.Errorf("%w: %w", errs.New(errs.InvalidRequest, "The request holds text that is not valid UTF-8 or contains a NUL character."), err)
		}
	}
	return err
}

func unavailable(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch {
		case pqErr.Code.Class() == "08", // connection exception
			pqErr.Code == "57P01", pqErr.Code == "57P02", pqErr.Code == "57P03", // shutdown, cannot connect now
			pqErr.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var netErr net.Error
	var opErr *net.OpError
	return errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ENOENT) || // Unix socket gone
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) ||
		errors.As(err, &opErr) ||
		(errors.As(err, &netErr) && netErr.Timeout())
}
