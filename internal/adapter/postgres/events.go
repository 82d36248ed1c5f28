package postgres

// The outbox: a use case records its events with RecordEvent inside its
// own transaction, and the same statement queues each event's webhook
// delivery; the dispatchers are notified (DeliveryChannel) once that
// transaction has committed (wake.go). They claim deliveries in
// webhooks.go.
// Below RecordEvent: the reads of the events API and the retention sweep.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/core/testclock"
	"github.com/fundsource/fundsource/internal/webhook"
)

// recordEvent writes an event and, when the scope has a webhook endpoint,
// its delivery, due at once; it reports how many deliveries it queued. One
// statement, one round trip.
var recordEvent = `
WITH ` + eventsSQL("true", 3) + `
SELECT count(*) FROM queued`

// RecordEvent writes an event row (and its webhook delivery); call it inside
// the change's transaction.
func (q queries) RecordEvent(ctx context.Context, e event.Event) error {
	return q.recordEvent(ctx, e, true)
}

// RecordUndeliveredEvent writes an event row that queues no delivery (the
// endpoint it is about was just disabled).
func (q queries) RecordUndeliveredEvent(ctx context.Context, e event.Event) error {
	return q.recordEvent(ctx, e, false)
}

func (q queries) recordEvent(ctx context.Context, e event.Event, deliver bool) error {
	_, _, err := q.writeEvent(ctx, recordEvent, e, deliver)
	return err
}

// writeEvent runs query (recordEvent or recordEventForEndpoint) for e,
// wakes the dispatchers for the deliveries it queued, and returns e's
// arrays (its delivery's id among them) and how many it queued.
func (q queries) writeEvent(ctx context.Context, query string, e event.Event, deliver bool) (eventArrays, int, error) {
	c, err := arraysOf(ctx, q.wall(), []event.Event{e}, deliver)
	if err != nil {
		return c, 0, err
	}
	var queued int
	if err := sqlx.GetContext(ctx, q.ex, &queued, query, append([]any{e.Scope.MerchantID, e.Scope.Env}, c.args()...)...); err != nil {
		return c, 0, translate(err)
	}
	q.queued(queued)
	return c, queued, nil
}

// recordEventForEndpoint is recordEvent only when the scope has a webhook
// endpoint: without one it writes nothing and queues nothing.
var recordEventForEndpoint = `
WITH ` + eventsSQL("EXISTS (SELECT 1 FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2)", 3) + `
SELECT count(*) FROM queued`

// RecordEventForEndpoint writes e and its delivery, due at once, in one
// statement that also checks the scope's webhook endpoint, and returns the
// delivery as written; errs.NotFound, with nothing written, when the scope
// has no endpoint.
func (q queries) RecordEventForEndpoint(ctx context.Context, e event.Event) (webhook.Delivery, error) {
	c, queued, err := q.writeEvent(ctx, recordEventForEndpoint, e, true)
	if err != nil {
		return webhook.Delivery{}, err
	}
	if queued == 0 {
		return webhook.Delivery{}, errs.New(errs.NotFound, "no webhook endpoint")
	}
	at := e.CreatedAt.UTC()
	return webhook.Delivery{ID: c.deliveries[0], Scope: e.Scope, EventID: e.ID, Status: webhook.Pending,
		NextAttemptAt: &at, CreatedAt: at, UpdatedAt: at}, nil
}

// eventsSQL are the common table expressions that record events in the
// statement of the change they are about, when cond holds: "ev" (the
// events) and "queued" (their webhook deliveries, when the scope has an
// endpoint; the statement reports how many, for q.queued, which wakes the
// dispatchers after the commit). $1 and $2 are the scope; $p to $p+6 are
// eventArgs: the events' ids, types, data and creation times, the
// deliveries' ids, the events' test clocks and clock times ("" for none),
// and when their deliveries are due.
func eventsSQL(cond string, p int) string {
	return eventCTEs(p, p+5, "", "$1", "$2", cond)
}

// rowEventsSQL is eventsSQL for a statement that changes rows of several
// scopes at once: each event belongs to a row of rows (a relation with
// id, merchant_id and environment), named by its id in $p+5, and is
// written, with its delivery, only when that row is. The events' test
// clocks, clock times and deliveries' due times are $clock to $clock+2.
func rowEventsSQL(rows string, p, clock int) string {
	return eventCTEs(p, clock, rows, "o.merchant_id", "o.environment", "true")
}

// insertDelivery is the one writer of new webhook deliveries: every
// statement that queues one (an event's, a mandate's with its debit, a
// re-sent event's) starts its part with it and selects, in this order, the
// delivery's id, merchant, environment and event, when it is due, and its
// creation and update times. A new delivery is pending and due at once.
const insertDelivery = `INSERT INTO webhook_deliveries (id, merchant_id, environment, event_id, next_attempt_at, created_at, updated_at)`

// eventCTEs writes eventsSQL and rowEventsSQL. The deliveries read the
// events from the arguments rather than from "ev" (no join in the plan);
// their foreign key still checks each event at the end of the statement.
func eventCTEs(p, clock int, rows, merchant, env, cond string) string {
	n := func(i int) string { return "$" + strconv.Itoa(p+i) }
	k := func(i int) string { return "$" + strconv.Itoa(clock+i) }
	owner, eCols, dCols, eJoin, dJoin := "", "", "", "", ""
	if rows != "" {
		owner, eCols, dCols = ", "+n(5)+"::text[]", ", owner", ", owner"
		eJoin, dJoin = "\n  JOIN "+rows+" o ON o.id = e.owner", "\n  JOIN "+rows+" o ON o.id = d.owner"
	}
	return `ev AS (
  INSERT INTO events (merchant_id, environment, id, type, data, created_at, test_clock_id, clock_time)
  SELECT ` + merchant + `, ` + env + `, e.id, e.type, e.data::jsonb, e.created_at::timestamptz,
    NULLIF(e.clock, ''), NULLIF(e.clock_time, '')::timestamptz
  FROM unnest(` + n(0) + `::text[], ` + n(1) + `::text[], ` + n(2) + `::text[], ` + n(3) + `::text[]` + owner + `, ` + k(0) + `::text[], ` + k(1) + `::text[])
    AS e(id, type, data, created_at` + eCols + `, clock, clock_time)` + eJoin + `
  WHERE ` + cond + `
), queued AS (
  ` + insertDelivery + `
  SELECT d.id, ` + merchant + `, ` + env + `, d.event_id, d.at::timestamptz, d.at::timestamptz, d.at::timestamptz
  FROM unnest(` + n(4) + `::text[], ` + n(0) + `::text[], ` + k(2) + `::text[]` + owner + `) AS d(id, event_id, at` + dCols + `)` + dJoin + `
  JOIN webhook_endpoints w ON w.merchant_id = ` + merchant + ` AND w.environment = ` + env + `
  WHERE d.id IS NOT NULL AND ` + cond + `
  RETURNING 1
)`
}

// eventArgs are the parameters of eventsSQL for evs, with their deliveries.
func eventArgs(ctx context.Context, wall time.Time, evs []event.Event) ([]any, error) {
	c, err := arraysOf(ctx, wall, evs, true)
	return c.args(), err
}

// arraysOf is evs as eventsSQL's arrays, on the test clock of ctx if any,
// at the wall clock's time wall; with deliver false they queue no
// delivery.
func arraysOf(ctx context.Context, wall time.Time, evs []event.Event, deliver bool) (eventArrays, error) {
	var c eventArrays
	for _, e := range evs {
		if err := c.add(event.OnClock(ctx, e), wall); err != nil {
			return c, err
		}
	}
	if !deliver {
		c.deliveries = []string{} // unnest pads it with NULLs, which queue nothing
	}
	return c, nil
}

// eventArrays are events as a statement's array parameters: their ids,
// types, JSON data and creation times, the ids of their deliveries, and
// their test clocks and clock times ("" for none), and when their
// deliveries are due.
type eventArrays struct {
	ids, types, data, at, deliveries []string
	clocks, clockAt, due             []string
}

// add appends e, with a new delivery id, due when its event was created.
// An event on a test clock is created when it is written, on the wall
// clock (wall), and carries the clock's time as clock_time: merchants
// hear of what happens on a clock as it happens, the events list and its
// retention keep the wall clock's order, and an advance's events, written
// step after step, come in the clock's order either way.
func (c *eventArrays) add(e event.Event, wall time.Time) error {
	b, err := json.Marshal(e.Data)
	if err != nil {
		return fmt.Errorf("record event %s: %w", e.Type, err)
	}
	clockAt, created := "", e.CreatedAt
	if e.TestClock != "" {
		clockAt, created = e.ClockTime.UTC().Format(time.RFC3339Nano), wall
	}
	c.ids, c.types, c.data = append(c.ids, e.ID), append(c.types, e.Type), append(c.data, string(b))
	c.at, c.deliveries = append(c.at, created.UTC().Format(time.RFC3339Nano)), append(c.deliveries, ids.New(webhook.DeliveryPrefix))
	due := created
	c.clocks, c.clockAt = append(c.clocks, e.TestClock), append(c.clockAt, clockAt)
	c.due = append(c.due, due.UTC().Format(time.RFC3339Nano))
	return nil
}

// args are the arrays as eventsSQL's parameters, in its order.
func (c eventArrays) args() []any {
	return []any{pq.StringArray(c.ids), pq.StringArray(c.types), pq.StringArray(c.data), pq.StringArray(c.at),
		pq.StringArray(c.deliveries), pq.StringArray(c.clocks), pq.StringArray(c.clockAt), pq.StringArray(c.due)}
}

// recording is write (a data-modifying statement whose first two
// parameters are the scope, and which has n) with events recorded in the
// same statement when it changes a row: one round trip for both. It
// returns how many rows write changed.
func recording(write string, n int) string {
	return `
WITH w AS (` + write + `
  RETURNING 1
), ` + eventsSQL("EXISTS (SELECT 1 FROM w)", n+1) + `
SELECT (SELECT count(*) FROM w) AS written, (SELECT count(*) FROM queued) AS queued`
}

// writeRecording runs write, or recording(write) with evs when there are
// any, and reports the rows it changed (none: errs.NotFound when one was
// expected).
func (q queries) writeRecording(ctx context.Context, write, withEvents string, args []any, evs []event.Event) (int64, error) {
	if len(evs) == 0 {
		res, err := q.ex.ExecContext(ctx, write, args...)
		if err != nil {
			return 0, translate(err)
		}
		return res.RowsAffected()
	}
	evArgs, err := eventArgs(ctx, q.wall(), evs)
	if err != nil {
		return 0, err
	}
	var r struct {
		Written int64 `db:"written"`
		Queued  int   `db:"queued"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, withEvents, append(args, evArgs...)...); err != nil {
		return 0, translate(err)
	}
	q.queued(r.Queued)
	return r.Written, nil
}

type eventRow struct {
	MerchantID  string          `db:"merchant_id"`
	Environment string          `db:"environment"`
	ID          string          `db:"id"`
	Type        string          `db:"type"`
	Data        json.RawMessage `db:"data"`
	CreatedAt   time.Time       `db:"created_at"`
	TestClock   *string         `db:"test_clock_id"`
	ClockTime   *time.Time      `db:"clock_time"`
}

func (r eventRow) domain() event.Event {
	e := event.Event{
		ID:    r.ID,
		Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		Type:  r.Type, CreatedAt: r.CreatedAt.UTC(), Data: r.Data,
	}
	if r.TestClock != nil && r.ClockTime != nil {
		e.TestClock, e.ClockTime = *r.TestClock, r.ClockTime.UTC()
	}
	return e
}

const eventColumns = `merchant_id, environment, id, type, data, created_at, test_clock_id, clock_time`

const selectEvent = `SELECT ` + eventColumns + ` FROM events WHERE merchant_id = $1 AND environment = $2 AND id = $3`

// Event returns one event.
func (q queries) Event(ctx context.Context, scope tenant.Scope, id string) (event.Event, error) {
	var r eventRow
	if err := sqlx.GetContext(ctx, q.ex, &r, selectEvent, scope.MerchantID, scope.Env, id); err != nil {
		return event.Event{}, translate(err)
	}
	return r.domain(), nil
}

const listEvents = `SELECT ` + eventColumns + `
FROM events
WHERE merchant_id = $1 AND environment = $2 AND (created_at, id) < ($3, $4)
  AND ($6 = '' OR type = $6) AND ($7 = '' OR starts_with(type, $7))
ORDER BY created_at DESC, id DESC
LIMIT $5`

// ListEvents returns up to p.Limit+1 events newest first.
func (q queries) ListEvents(ctx context.Context, scope tenant.Scope, typ, prefix string, p paging.Page) ([]event.Event, error) {
	var rows []eventRow
	if err := q.list(ctx, &rows, listEvents, "events", scope, p, typ, prefix); err != nil {
		return nil, err
	}
	return mapRows(rows, eventRow.domain), nil
}

// sourceEvents uses the index events_by_source (migration 00008).
const sourceEvents = `SELECT ` + eventColumns + `
FROM events
WHERE merchant_id = $1 AND environment = $2 AND data ? 'funding_source_id' AND data->>'funding_source_id' = $3
ORDER BY data->>'funding_source_id', created_at DESC, id DESC
LIMIT $4`

// SourceEvents returns up to limit events about a funding source, newest first.
func (q queries) SourceEvents(ctx context.Context, scope tenant.Scope, sourceID string, limit int) ([]event.Event, error) {
	var rows []eventRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, sourceEvents, scope.MerchantID, scope.Env, sourceID, limit); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, eventRow.domain), nil
}

const deleteEventsBefore = `
DELETE FROM events WHERE ctid = ANY (ARRAY(SELECT ctid FROM events WHERE created_at < $1 LIMIT $2))`

// DeleteEventsBefore deletes up to limit events created before t; their
// deliveries and attempts go with them.
func (q queries) DeleteEventsBefore(ctx context.Context, t time.Time, limit int) (int64, error) {
	res, err := q.ex.ExecContext(ctx, deleteEventsBefore, t, limit)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// onClock is evs on the test clock of ctx, if any (event.OnClock): for
// events written later by a statement that runs without the request's
// context (a creation batch).
func onClock(ctx context.Context, evs []event.Event) []event.Event {
	if _, ok := testclock.From(ctx); !ok {
		return evs
	}
	out := make([]event.Event, len(evs))
	for i, e := range evs {
		out[i] = event.OnClock(ctx, e)
	}
	return out
}
