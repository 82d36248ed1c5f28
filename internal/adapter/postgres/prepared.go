package postgres

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/lib/pq"
)

// maxPreparedPerConn bounds each connection's statement cache. The service
// has a fixed set of statements, far fewer; past the bound, a statement
// runs unprepared as before.
const maxPreparedPerConn = 256

// preparingConnector opens lib/pq connections that prepare each statement
// (with arguments) once per connection and reuse it. PostgreSQL then parses
// and plans a statement once per connection instead of on every call, and
// lib/pq sends each call in one round trip instead of two (an unnamed
// statement is parsed and described first, then bound and run).
//
// It works below database/sql, per connection, so a transaction uses the
// statements of its own connection and never waits for another one to
// prepare, and a connection that dies takes its statements with it.
//
// A connection may start with session settings (init, one SET statement
// each), which hold for all its statements.
type preparingConnector struct {
	driver.Connector
	init []string
}

func newPreparingConnector(dsn string, init ...string) (driver.Connector, error) {
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return preparingConnector{c, init}, nil
}

func (c preparingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	inner, ok := cn.(pqConn)
	if !ok {
		return cn, nil
	}
	for _, set := range c.init {
		if _, err := inner.ExecContext(ctx, set, nil); err != nil {
			_ = inner.Close()
			return nil, err
		}
	}
	return &preparingConn{pqConn: inner, stmts: map[string]preparedStmt{}}, nil
}

// pqConn is what database/sql uses of a lib/pq connection.
type pqConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

type preparedStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// preparingConn is used by one goroutine at a time (database/sql's
// guarantee for a driver connection), so its cache needs no lock.
type preparingConn struct {
	pqConn
	stmts map[string]preparedStmt
	// bad is set when the server refused a write as read-only (a standby,
	// or a primary stepping down): database/sql then closes the
	// connection instead of pooling it, and the next one goes to the
	// primary of the moment.
	bad bool
}

// IsValid is false for a connection found read-only.
func (c *preparingConn) IsValid() bool { return !c.bad && c.pqConn.IsValid() }

// ResetSession refuses a connection found read-only.
func (c *preparingConn) ResetSession(ctx context.Context) error {
	if c.bad {
		return driver.ErrBadConn
	}
	return c.pqConn.ResetSession(ctx)
}

// BeginTx marks the connection bad when a standby refuses the transaction.
func (c *preparingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.pqConn.BeginTx(ctx, opts)
	c.check(err)
	return tx, err
}

// check marks the connection bad when err says its server is read-only.
func (c *preparingConn) check(err error) {
	if err != nil && readOnly(err) {
		c.bad = true
	}
}

// stmt returns the connection's prepared statement for query, preparing it
// on first use; nil when the query should run unprepared.
func (c *preparingConn) stmt(ctx context.Context, query string, args []driver.NamedValue) (preparedStmt, error) {
	if len(args) == 0 {
		// Statements without arguments (BEGIN, SAVEPOINT, migrations with
		// several statements) go through the simple protocol.
		return nil, nil
	}
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	if len(c.stmts) >= maxPreparedPerConn {
		return nil, nil
	}
	s, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, ok := s.(preparedStmt)
	if !ok {
		_ = s.Close()
		return nil, nil
	}
	c.stmts[query] = st
	return st, nil
}

// forget drops a statement PostgreSQL no longer accepts: "cached plan must
// not change result type" after a migration changed a table under it. The
// next call prepares it again.
func (c *preparingConn) forget(query string, err error) {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "0A000" {
		if st, ok := c.stmts[query]; ok {
			delete(c.stmts, query)
			_ = st.Close()
		}
	}
}

func (c *preparingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	st, err := c.stmt(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if st == nil {
		rows, err := c.pqConn.QueryContext(ctx, query, args)
		c.check(err)
		return rows, err
	}
	rows, err := st.QueryContext(ctx, args)
	if err != nil {
		c.forget(query, err)
		c.check(err)
	}
	return rows, err
}

func (c *preparingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	st, err := c.stmt(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if st == nil {
		res, err := c.pqConn.ExecContext(ctx, query, args)
		c.check(err)
		return res, err
	}
	res, err := st.ExecContext(ctx, args)
	if err != nil {
		c.forget(query, err)
		c.check(err)
	}
	return res, err
}
