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
//
// Failover: every connection (the pool, the creation batch writers, the
// waker, the listeners) is opened through ConnString, so with several
// hosts and target_session_attrs=read-write each new one goes to the
// primary of the moment. A connection that meets a read-only server is
// dropped instead of pooled, and every error that means "no primary now"
// (a dead host, a standby, lib/pq finding no writable host among several)
// is service_unavailable, whatever the order of its causes: the client
// retries with its Idempotency-Key, which makes the retry safe whether the
// first attempt committed or not.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
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
	// auditKey keys the audit chain's new events (nil: unkeyed); set once
	// by SetAuditKey before use.
	auditKey []byte
	// now is the service's wall clock (nil: time.Now); set once by
	// SetClock before use.
	now func() time.Time
}

// SetAuditKey sets the key (AUDIT_KEY) new audit events are hashed under.
// Call it before the database is used.
func (db *DB) SetAuditKey(key []byte) { db.auditKey = key }

// SetClock sets the service's wall clock, which the deliveries of events on
// a test clock are due by. Call it before the database is used.
func (db *DB) SetClock(now func() time.Time) { db.now = now }

// wall is the service's wall clock's time.
func (q queries) wall() time.Time {
	if q.db != nil && q.db.now != nil {
		return q.db.now()
	}
	return time.Now()
}

// Open connects to databaseURL (any form ConnString accepts) and checks
// the connection.
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
// (see preparingConnector), the creation batch writers' pool, and the
// dispatchers' waker, which has a connection of its own. All three open
// their connections through the same connection string, so with several
// hosts each new connection goes to whichever is primary then, and a
// connection that finds itself on a read-only server is dropped
// (preparingConn.bad) rather than returned to its pool.
func open(databaseURL string) (*DB, error) {
	dsn, err := ConnString(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	c, err := newPreparingConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	bc, err := newPreparingConnector(dsn, batchSession...)
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

// connString is ConnString, or databaseURL itself when it does not parse
// (lib/pq then reports why on each connection attempt).
func connString(databaseURL string) string {
	if dsn, err := ConnString(databaseURL); err == nil {
		return dsn
	}
	return databaseURL
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

// Ping checks that the database answers on a writable primary (for
// /readyz): a standby, or a server whose sessions are read-only, is
// service_unavailable, and the pool drops the connection that found it.
func (db *DB) Ping(ctx context.Context) error {
	conn, err := db.x.Conn(ctx)
	if err != nil {
		return translate(err)
	}
	defer conn.Close()
	var writable bool
	if err := conn.QueryRowContext(ctx, pingWritable).Scan(&writable); err != nil {
		return translate(err)
	}
	if !writable {
		_ = conn.Raw(func(dc any) error {
			if c, ok := dc.(*preparingConn); ok {
				c.bad = true
			}
			return nil
		})
		return serviceUnavailable(errNotWritable)
	}
	return nil
}

const pingWritable = `SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'`

var errNotWritable = errors.New("the database server is read-only (a standby, or no primary yet)")

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
	if err := rebuildInvalidIndexes(ctx, x, locker); err != nil {
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
		return queries{}, fmt.Errorf("begin a transaction: %w", translate(err))
	}
	return queries{ex: tx, db: db, tx: &txState{tx: tx}}, nil
}

// commit commits q's transaction and wakes the dispatchers when it queued
// deliveries.
func (q queries) commit() error {
	if err := q.tx.tx.Commit(); err != nil {
		return fmt.Errorf("commit a transaction: %w", translate(err))
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
			return fmt.Errorf("take a savepoint: %w", translate(err))
		}
		if err := fn(q); err != nil {
			if _, rerr := st.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp); rerr != nil {
				return errors.Join(err, fmt.Errorf("roll back to a savepoint: %w", translate(rerr)))
			}
			return err
		}
		if _, err := st.tx.ExecContext(ctx, "RELEASE SAVEPOINT "+sp); err != nil {
			return fmt.Errorf("release a savepoint: %w", translate(err))
		}
		return nil
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
// no rows → errs.NotFound, unique violation → errs.Conflict, an unreachable,
// restarting or read-only database (no primary yet during a failover) →
// errs.ServiceUnavailable. The cause stays wrapped for logs.
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
		return serviceUnavailable(err)
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

func serviceUnavailable(cause error) error {
	return fmt.Errorf("%w: %w", errs.New(errs.ServiceUnavailable, "The service is temporarily unavailable; retry shortly."), cause)
}

// unavailable reports whether any cause in err's tree says the database
// cannot take the statement now. lib/pq joins one cause per host when none
// of several hosts would do ("could not connect to any of the hosts"), so
// every cause counts, not just the first *pq.Error.
func unavailable(err error) bool {
	return anyCause(err, func(e error) bool {
		if pqErr, ok := e.(*pq.Error); ok {
			return unavailableCode(pqErr.Code) || inRecovery(pqErr)
		}
		var netErr net.Error
		return e == driver.ErrBadConn ||
			e == syscall.ECONNREFUSED || e == syscall.ECONNRESET ||
			e == syscall.ENOENT || // Unix socket gone
			e == io.ErrUnexpectedEOF || e == io.EOF ||
			isOpError(e) ||
			(errors.As(e, &netErr) && netErr.Timeout()) ||
			readOnlySession(e)
	})
}

func unavailableCode(code pq.ErrorCode) bool {
	switch {
	case code.Class() == "08", // connection exception
		code == "57P01", code == "57P02", code == "57P03", // shutdown, cannot connect now
		code == "53300", // too many connections
		code == "25006": // read_only_sql_transaction: a standby, or a primary being demoted
		return true
	}
	return false
}

func isOpError(e error) bool {
	_, ok := e.(*net.OpError)
	return ok
}

// readOnlySession reports lib/pq's refusals of a host under
// target_session_attrs=read-write. lib/pq makes them with errors.New, so
// their text is all there is to match.
func readOnlySession(e error) bool {
	switch e.Error() {
	case "session is read-only", "server is in hot standby mode":
		return true
	}
	return false
}

// anyCause reports whether f holds for err or any error it wraps, through
// both Unwrap() error and Unwrap() []error.
func anyCause(err error, f func(error) bool) bool {
	for err != nil {
		if f(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if anyCause(e, f) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return false
		}
	}
	return false
}

// inRecovery reports a standby's refusal of BEGIN READ WRITE (which lib/pq
// sends for every read-write transaction): its code, feature_not_supported,
// is shared with unrelated errors, so the message tells it apart.
func inRecovery(e *pq.Error) bool {
	return e.Code == "0A000" && e.Message == "cannot set transaction read-write mode during recovery"
}

// readOnly reports whether err says the connection's server does not take
// writes, so the connection is of no more use to a service that writes.
func readOnly(err error) bool {
	return anyCause(err, func(e error) bool {
		pqErr, ok := e.(*pq.Error)
		return ok && (pqErr.Code == "25006" || inRecovery(pqErr))
	})
}
