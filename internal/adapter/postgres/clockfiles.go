package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/adapter/banksim"
	"github.com/fundsource/fundsource/internal/core/testclock"
)

// ClockFiles is the exchange of one sandbox test clock's originator with
// its simulated bank, kept in the database (test_clock_files): the
// originator's side is an ach.Transport, the bank's is Bank. Each write
// is one statement, so a step that crashes leaves a file whole or absent.
type ClockFiles struct {
	db      *DB
	clockID string
}

// ClockFiles returns the exchange of clock clockID. A file is stamped
// with the time of the step that writes it (the clock's, from the
// context), so both sides read the files in the clock's order.
func (db *DB) ClockFiles(clockID string) *ClockFiles {
	return &ClockFiles{db: db, clockID: clockID}
}

const putClockFile = `
INSERT INTO test_clock_files (test_clock_id, box, name, data, written_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (test_clock_id, box, name) DO UPDATE SET data = EXCLUDED.data, written_at = EXCLUDED.written_at`

func (c *ClockFiles) put(ctx context.Context, box, name string, data []byte) error {
	at := testclock.Now(ctx, time.Now).UTC()
	_, err := c.db.x.ExecContext(ctx, putClockFile, c.clockID, box, name, data, at)
	return translate(err)
}

// ClockFile is a file of the exchange.
type ClockFile struct {
	Name      string    `db:"name"`
	Data      []byte    `db:"data"`
	WrittenAt time.Time `db:"written_at"`
}

const clockFiles = `SELECT name, data, written_at FROM test_clock_files WHERE test_clock_id = $1 AND box = $2 ORDER BY written_at, name`

func (c *ClockFiles) list(ctx context.Context, box string) ([]ClockFile, error) {
	var out []ClockFile
	err := sqlx.SelectContext(ctx, c.db.x, &out, clockFiles, c.clockID, box)
	return out, translate(err)
}

// Deliver puts a built file where the bank reads it (ach.Transport).
func (c *ClockFiles) Deliver(ctx context.Context, name string, data []byte) error {
	return c.put(ctx, "outbound", name, data)
}

// Inbound lists the bank's answers (ach.Transport).
func (c *ClockFiles) Inbound(ctx context.Context) ([]ach.InboundFile, error) {
	files, err := c.list(ctx, "inbound")
	if err != nil {
		return nil, err
	}
	out := make([]ach.InboundFile, len(files))
	for i, f := range files {
		out[i] = ach.InboundFile{Name: f.Name, Size: int64(len(f.Data)), ModTime: f.WrittenAt}
	}
	return out, nil
}

const clockFile = `SELECT data FROM test_clock_files WHERE test_clock_id = $1 AND box = 'inbound' AND name = $2`

// Fetch reads an answer (ach.Transport).
func (c *ClockFiles) Fetch(ctx context.Context, name string) ([]byte, error) {
	var data []byte
	err := sqlx.GetContext(ctx, c.db.x, &data, clockFile, c.clockID, name)
	return data, translate(err)
}

const rejectClockFile = `UPDATE test_clock_files SET box = 'rejected' WHERE test_clock_id = $1 AND box = 'inbound' AND name = $2`

// Reject sets an unreadable answer aside (ach.Transport).
func (c *ClockFiles) Reject(ctx context.Context, name string) error {
	_, err := c.db.x.ExecContext(ctx, rejectClockFile, c.clockID, name)
	return translate(err)
}

// Kind is ach.TransportTestClock.
func (c *ClockFiles) Kind() string { return ach.TransportTestClock }

// Bank is the simulated bank's side of the exchange (banksim.Exchange).
func (c *ClockFiles) Bank() ClockBank { return ClockBank{c} }

// ClockBank reads what the originator delivered and leaves its answers.
type ClockBank struct{ c *ClockFiles }

var _ banksim.Exchange = ClockBank{}

// Outbox lists the files the originator delivered.
func (b ClockBank) Outbox(ctx context.Context) ([]banksim.File, error) {
	files, err := b.c.list(ctx, "outbound")
	if err != nil {
		return nil, err
	}
	out := make([]banksim.File, len(files))
	for i, f := range files {
		out[i] = banksim.File{Name: f.Name, Data: f.Data}
	}
	return out, nil
}

// Deliver leaves an answer file for the originator.
func (b ClockBank) Deliver(ctx context.Context, name string, data []byte) (string, error) {
	return "test clock " + b.c.clockID + " inbound/" + name, b.c.put(ctx, "inbound", name, data)
}

const clockBankState = `SELECT state FROM test_clock_banks WHERE test_clock_id = $1`

// LoadState reads the bank's memory; nil before its first step.
func (b ClockBank) LoadState(ctx context.Context) ([]byte, error) {
	var state []byte
	err := sqlx.GetContext(ctx, b.c.db.x, &state, clockBankState, b.c.clockID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return state, translate(err)
}

const saveClockBankState = `
INSERT INTO test_clock_banks (test_clock_id, state) VALUES ($1, $2)
ON CONFLICT (test_clock_id) DO UPDATE SET state = EXCLUDED.state`

// SaveState keeps the bank's memory.
func (b ClockBank) SaveState(ctx context.Context, state []byte) error {
	_, err := b.c.db.x.ExecContext(ctx, saveClockBankState, b.c.clockID, state)
	return translate(err)
}
