package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/webhook"
)

// DeliveryChannel is the PostgreSQL notification channel that wakes the
// webhook dispatchers when a delivery is queued.
const DeliveryChannel = "webhook_deliveries"

type endpointRow struct {
	MerchantID        string     `db:"merchant_id"`
	Environment       string     `db:"environment"`
	URL               string     `db:"url"`
	SecretKeyID       string     `db:"secret_key_id"`
	SecretSealed      []byte     `db:"secret_sealed"`
	PreviousKeyID     *string    `db:"previous_secret_key_id"`
	PreviousSealed    []byte     `db:"previous_secret_sealed"`
	PreviousExpiresAt *time.Time `db:"previous_secret_expires_at"`
	CreatedAt         time.Time  `db:"created_at"`
	UpdatedAt         time.Time  `db:"updated_at"`
	Failures          int        `db:"consecutive_failures"`
	FailingSince      *time.Time `db:"failing_since"`
	DisabledAt        *time.Time `db:"disabled_at"`
}

func (r endpointRow) domain() webhook.Endpoint {
	ep := webhook.Endpoint{
		Scope:     tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		URL:       r.URL,
		Secret:    webhook.Sealed{KeyID: r.SecretKeyID, Data: r.SecretSealed},
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		ConsecutiveFailures: r.Failures, FailingSince: utcPtr(r.FailingSince), DisabledAt: utcPtr(r.DisabledAt),
	}
	if r.PreviousKeyID != nil && r.PreviousExpiresAt != nil {
		ep.Previous = &webhook.Sealed{KeyID: *r.PreviousKeyID, Data: r.PreviousSealed}
		ep.PreviousExpiresAt = utcPtr(r.PreviousExpiresAt)
	}
	return ep
}

const endpointColumns = `merchant_id, environment, url, secret_key_id, secret_sealed,
previous_secret_key_id, previous_secret_sealed, previous_secret_expires_at, created_at, updated_at,
consecutive_failures, failing_since, disabled_at`

const upsertEndpoint = `
INSERT INTO webhook_endpoints (merchant_id, environment, url, secret_key_id, secret_sealed, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $6)
ON CONFLICT (merchant_id, environment) DO UPDATE SET url = EXCLUDED.url, updated_at = EXCLUDED.updated_at
RETURNING ` + endpointColumns

// UpsertEndpoint stores a new endpoint, or changes the URL of the existing one.
func (q queries) UpsertEndpoint(ctx context.Context, ep webhook.Endpoint) (webhook.Endpoint, error) {
	var r endpointRow
	err := sqlx.GetContext(ctx, q.ex, &r, upsertEndpoint, ep.Scope.MerchantID, ep.Scope.Env, ep.URL,
		ep.Secret.KeyID, ep.Secret.Data, ep.CreatedAt)
	if err != nil {
		return webhook.Endpoint{}, translate(err)
	}
	return r.domain(), nil
}

const selectEndpoint = `SELECT ` + endpointColumns + `
FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2`

// Endpoint returns the scope's endpoint.
func (q queries) Endpoint(ctx context.Context, scope tenant.Scope) (webhook.Endpoint, error) {
	return getOne[endpointRow](ctx, q.ex, selectEndpoint, scope.MerchantID, scope.Env)
}

// EndpointForUpdate is Endpoint with its row locked until the transaction
// ends.
func (q queries) EndpointForUpdate(ctx context.Context, scope tenant.Scope) (webhook.Endpoint, error) {
	return getOne[endpointRow](ctx, q.ex, selectEndpoint+` FOR UPDATE`, scope.MerchantID, scope.Env)
}

const updateSecrets = `
UPDATE webhook_endpoints SET secret_key_id = $3, secret_sealed = $4,
  previous_secret_key_id = $5, previous_secret_sealed = $6, previous_secret_expires_at = $7, updated_at = $8
WHERE merchant_id = $1 AND environment = $2`

// UpdateSecrets stores an endpoint's current and previous secrets.
func (q queries) UpdateSecrets(ctx context.Context, ep webhook.Endpoint) error {
	var prevID *string
	var prev []byte
	if ep.Previous != nil {
		prevID, prev = &ep.Previous.KeyID, ep.Previous.Data
	}
	res, err := q.ex.ExecContext(ctx, updateSecrets, ep.Scope.MerchantID, ep.Scope.Env,
		ep.Secret.KeyID, ep.Secret.Data, prevID, prev, ep.PreviousExpiresAt, ep.UpdatedAt)
	return oneRow(res, err, errs.NotFound)
}

// deleteEndpoint cancels the scope's pending deliveries, then removes its
// endpoint: "gone" waits for "canceled" (its condition reads it), so the
// statement locks the deliveries before the endpoint's row. A dispatcher
// recording an attempt locks them in that order too (the delivery, then
// the endpoint's failure streak); the other order deadlocked with it.
const deleteEndpoint = `
WITH canceled AS (
  UPDATE webhook_deliveries SET status = 'canceled', next_attempt_at = NULL,
    last_error = 'The webhook endpoint was deleted.', updated_at = $3
  WHERE merchant_id = $1 AND environment = $2 AND status = 'pending'
  RETURNING 1
), gone AS (
  DELETE FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2
    AND (SELECT count(*) FROM canceled) >= 0
  RETURNING 1
)
SELECT count(*) FROM gone`

// DeleteEndpoint removes the scope's endpoint and cancels its pending deliveries.
func (q queries) DeleteEndpoint(ctx context.Context, scope tenant.Scope, at time.Time) error {
	var n int
	if err := sqlx.GetContext(ctx, q.ex, &n, deleteEndpoint, scope.MerchantID, scope.Env, at); err != nil {
		return translate(err)
	}
	if n == 0 {
		return errs.New(errs.NotFound, "no webhook endpoint")
	}
	return nil
}

type logRow struct {
	eventRow
	DeliveryStatus *string    `db:"d_status"`
	Attempts       *int       `db:"d_attempts"`
	NextAttemptAt  *time.Time `db:"d_next_attempt_at"`
	StatusCode     *int       `db:"a_status_code"`
	LatencyMS      *int       `db:"a_latency_ms"`
}

func (r logRow) domain() webhook.LogEntry {
	e := webhook.LogEntry{Event: r.eventRow.domain(), DeliveryStatus: deref(r.DeliveryStatus),
		NextAttemptAt: utcPtr(r.NextAttemptAt), LastStatusCode: r.StatusCode, LastLatencyMS: r.LatencyMS}
	if r.Attempts != nil {
		e.Attempts = *r.Attempts
	}
	return e
}

const deliveryLog = `
SELECT e.merchant_id, e.environment, e.id, e.type, e.data, e.created_at, e.test_clock_id, e.clock_time,
       d.status AS d_status, d.attempts AS d_attempts, d.next_attempt_at AS d_next_attempt_at,
       a.status_code AS a_status_code, a.latency_ms AS a_latency_ms
FROM events e
LEFT JOIN LATERAL (
    SELECT id, status, attempts, next_attempt_at FROM webhook_deliveries d
    WHERE d.merchant_id = e.merchant_id AND d.environment = e.environment AND d.event_id = e.id
    ORDER BY d.created_at DESC, d.id DESC LIMIT 1
) d ON true
LEFT JOIN LATERAL (
    SELECT status_code, latency_ms FROM webhook_attempts a
    WHERE a.delivery_id = d.id ORDER BY a.attempted_at DESC, a.id DESC LIMIT 1
) a ON true
WHERE e.merchant_id = $1 AND e.environment = $2 AND (e.created_at, e.id) < ($3, $4)
ORDER BY e.created_at DESC, e.id DESC
LIMIT $5`

// DeliveryLog returns up to p.Limit+1 events newest first with the state of
// their latest delivery.
func (q queries) DeliveryLog(ctx context.Context, scope tenant.Scope, p paging.Page) ([]webhook.LogEntry, error) {
	var rows []logRow
	if err := q.list(ctx, &rows, deliveryLog, "events", scope, p); err != nil {
		return nil, err
	}
	return mapRows(rows, logRow.domain), nil
}

type deliveryRow struct {
	ID            string     `db:"id"`
	MerchantID    string     `db:"merchant_id"`
	Environment   string     `db:"environment"`
	EventID       string     `db:"event_id"`
	Status        string     `db:"status"`
	Attempts      int        `db:"attempts"`
	NextAttemptAt *time.Time `db:"next_attempt_at"`
	LastError     *string    `db:"last_error"`
	CreatedAt     time.Time  `db:"created_at"`
	UpdatedAt     time.Time  `db:"updated_at"`
}

func (r deliveryRow) domain() webhook.Delivery {
	return webhook.Delivery{
		ID: r.ID, Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		EventID: r.EventID, Status: r.Status, Attempts: r.Attempts, NextAttemptAt: utcPtr(r.NextAttemptAt),
		LastError: r.LastError, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
}

const deliveryColumns = `d.id, d.merchant_id, d.environment, d.event_id, d.status, d.attempts,
d.next_attempt_at, d.last_error, d.created_at, d.updated_at`

const selectDeliveries = `SELECT ` + deliveryColumns + `
FROM webhook_deliveries d WHERE d.merchant_id = $1 AND d.environment = $2 AND d.event_id = $3
ORDER BY d.created_at, d.id`

type attemptRow struct {
	DeliveryID   string    `db:"delivery_id"`
	AttemptedAt  time.Time `db:"attempted_at"`
	URL          string    `db:"url"`
	StatusCode   *int      `db:"status_code"`
	LatencyMS    int       `db:"latency_ms"`
	ResponseBody string    `db:"response_body"`
	Error        *string   `db:"error"`
}

const selectAttempts = `
SELECT a.delivery_id, a.attempted_at, a.url, a.status_code, a.latency_ms, a.response_body, a.error
FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
WHERE d.merchant_id = $1 AND d.environment = $2 AND d.event_id = $3
ORDER BY a.attempted_at, a.id`

// Deliveries returns an event's deliveries with their attempts, oldest first.
func (q queries) Deliveries(ctx context.Context, scope tenant.Scope, eventID string) ([]webhook.Delivery, error) {
	var ds []deliveryRow
	if err := sqlx.SelectContext(ctx, q.ex, &ds, selectDeliveries, scope.MerchantID, scope.Env, eventID); err != nil {
		return nil, translate(err)
	}
	var as []attemptRow
	if err := sqlx.SelectContext(ctx, q.ex, &as, selectAttempts, scope.MerchantID, scope.Env, eventID); err != nil {
		return nil, translate(err)
	}
	out := make([]webhook.Delivery, len(ds))
	at := make(map[string]int, len(ds))
	for i, r := range ds {
		out[i] = r.domain()
		at[r.ID] = i
	}
	for _, a := range as {
		d := &out[at[a.DeliveryID]]
		d.Log = append(d.Log, webhook.Attempt{
			AttemptedAt: a.AttemptedAt.UTC(), URL: a.URL, StatusCode: a.StatusCode,
			LatencyMS: a.LatencyMS, ResponseBody: a.ResponseBody, Error: a.Error,
		})
	}
	return out, nil
}

const queueDelivery = `
WITH due AS (
  UPDATE webhook_deliveries SET next_attempt_at = $4, updated_at = $4
  WHERE merchant_id = $1 AND environment = $2 AND event_id = $3 AND status = 'pending' AND lease_token IS NULL
  RETURNING 1
), added AS (
  ` + insertDelivery + `
  SELECT $5, $1, $2, $3, $4, $4, $4 WHERE NOT EXISTS (SELECT 1 FROM due)
  RETURNING 1
)
SELECT (SELECT count(*) FROM due) + (SELECT count(*) FROM added)`

// QueueDelivery makes the event's pending delivery due now (unless it is
// being sent right now) or adds a new one, and wakes the dispatchers when
// the transaction commits.
func (q queries) QueueDelivery(ctx context.Context, scope tenant.Scope, eventID, id string, now time.Time) error {
	var n int
	if err := sqlx.GetContext(ctx, q.ex, &n, queueDelivery, scope.MerchantID, scope.Env, eventID, now, id); err != nil {
		return translate(err)
	}
	q.queued(n)
	return nil
}

type deliveryClaimRow struct {
	deliveryRow
	Type              string          `db:"type"`
	Data              json.RawMessage `db:"data"`
	EventCreatedAt    time.Time       `db:"event_created_at"`
	TestClock         *string         `db:"test_clock_id"`
	ClockTime         *time.Time      `db:"clock_time"`
	URL               string          `db:"url"`
	SecretKeyID       string          `db:"secret_key_id"`
	SecretSealed      []byte          `db:"secret_sealed"`
	PreviousKeyID     *string         `db:"previous_secret_key_id"`
	PreviousSealed    []byte          `db:"previous_secret_sealed"`
	PreviousExpiresAt *time.Time      `db:"previous_secret_expires_at"`
	Failures          int             `db:"consecutive_failures"`
	LeaseToken        string          `db:"lease_token"`
}

// claimDeliveries leases due deliveries fairly. For every enabled endpoint
// it reads, through the partial index by endpoint, the oldest due
// deliveries up to the endpoint's room in this process ($8 minus what the
// process has in flight there: $2 keys, $7 counts), and only the oldest
// one of a backing-off endpoint without a delivery in flight. Of those it
// takes $3, every endpoint's first before any endpoint's second, locks them
// with SKIP LOCKED so concurrent claims never take the same row, and
// leases them: next_attempt_at moves to the lease's end ($4), when the
// delivery is due again should this process die.
//
// Its commit does not wait for the disk (synchronous_commit off for this
// statement's transaction, "lazy"): a lease is visible to every other
// claim once committed, flushed or not, and a lease lost with an
// unflushed commit is a process that died: the delivery is due again and
// sent again, as the lease's end would have it. The attempt's record,
// which waits for the disk, flushes the lease's commit before its own.
// The dispatcher claims one round at a time, so a claim that waited for
// the disk held up every delivery behind it.
const claimDeliveries = `
WITH lazy AS (
  SELECT set_config('synchronous_commit', 'off', true) AS v
), room AS (
  SELECT k, n FROM unnest($2::text[], $7::int[]) AS f(k, n)
), cand AS (
  SELECT c.id, c.next_attempt_at, c.rn
  FROM webhook_endpoints w
  CROSS JOIN LATERAL (
    SELECT d.id, d.next_attempt_at, row_number() OVER (ORDER BY d.next_attempt_at) AS rn
    FROM webhook_deliveries d
    WHERE d.merchant_id = w.merchant_id AND d.environment = w.environment
      AND d.status = 'pending' AND d.next_attempt_at <= $1
    ORDER BY d.next_attempt_at
    LIMIT $8
  ) c
  WHERE w.disabled_at IS NULL
    AND c.rn <= $8 - coalesce((SELECT n FROM room WHERE k = w.merchant_id || '/' || w.environment), 0)
    AND (w.consecutive_failures < $6 OR (c.rn = 1 AND NOT EXISTS (
      SELECT 1 FROM webhook_deliveries x
      WHERE x.merchant_id = w.merchant_id AND x.environment = w.environment AND x.status = 'pending'
        AND x.leased_until > $1)))
), pick AS (
  SELECT d.id
  FROM webhook_deliveries d
  WHERE d.id IN (SELECT id FROM cand ORDER BY rn, next_attempt_at LIMIT $3)
    AND d.status = 'pending' AND d.next_attempt_at <= $1
  FOR UPDATE SKIP LOCKED
), leased AS (
  UPDATE webhook_deliveries d SET next_attempt_at = $4, leased_until = $4, lease_token = $5
  FROM pick WHERE d.id = pick.id
  RETURNING d.*
)
SELECT ` + deliveryColumns + `, d.lease_token, e.type, e.data, e.created_at AS event_created_at, e.test_clock_id, e.clock_time,
  w.url, w.secret_key_id, w.secret_sealed, w.previous_secret_key_id, w.previous_secret_sealed,
  w.previous_secret_expires_at, w.consecutive_failures
FROM leased d
JOIN events e ON e.merchant_id = d.merchant_id AND e.environment = d.environment AND e.id = d.event_id
JOIN webhook_endpoints w ON w.merchant_id = d.merchant_id AND w.environment = d.environment
WHERE (SELECT v FROM lazy) = 'off'`

// ClaimDeliveries leases due deliveries (see claimDeliveries). Run outside
// a transaction, it commits at once: no lock outlives the statement.
func (q queries) ClaimDeliveries(ctx context.Context, r webhook.ClaimRequest) ([]webhook.Claim, error) {
	keys, counts := make([]string, 0, len(r.InFlight)), make([]int64, 0, len(r.InFlight))
	for k, n := range r.InFlight {
		keys, counts = append(keys, k), append(counts, int64(n))
	}
	var rows []deliveryClaimRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, claimDeliveries, r.Now, pq.Array(keys), r.Limit, r.LeaseUntil,
		r.Token, webhook.BackoffAfter, pq.Array(counts), max(r.PerEndpoint, 1)); err != nil {
		return nil, translate(err)
	}
	out := make([]webhook.Claim, len(rows))
	for i, row := range rows {
		d := row.deliveryRow.domain()
		ep := endpointRow{
			MerchantID: row.MerchantID, Environment: row.Environment, URL: row.URL,
			SecretKeyID: row.SecretKeyID, SecretSealed: row.SecretSealed,
			PreviousKeyID: row.PreviousKeyID, PreviousSealed: row.PreviousSealed, PreviousExpiresAt: row.PreviousExpiresAt,
			Failures: row.Failures,
		}
		ev := event.Event{ID: d.EventID, Scope: d.Scope, Type: row.Type, CreatedAt: row.EventCreatedAt.UTC(), Data: row.Data}
		if row.TestClock != nil && row.ClockTime != nil {
			ev.TestClock, ev.ClockTime = *row.TestClock, row.ClockTime.UTC()
		}
		out[i] = webhook.Claim{
			Delivery:   d,
			Event:      ev,
			Endpoint:   ep.domain(),
			LeaseToken: row.LeaseToken,
		}
	}
	return out, nil
}

const finishDelivery = `
WITH done AS (
  UPDATE webhook_deliveries SET status = $2, attempts = $3, next_attempt_at = $4, last_error = $5, updated_at = $6,
    lease_token = NULL, leased_until = NULL
  WHERE id = $1 AND lease_token = $13 AND status = 'pending'
  RETURNING id, merchant_id, environment
), attempt AS (
  INSERT INTO webhook_attempts (delivery_id, attempted_at, url, status_code, latency_ms, response_body, error)
  SELECT id, $7, $8, $9, $10, $11, $12 FROM done
), healthy AS (
  UPDATE webhook_endpoints w SET consecutive_failures = 0, failing_since = NULL
  FROM done
  WHERE $2 = '` + webhook.Delivered + `' AND w.merchant_id = done.merchant_id AND w.environment = done.environment
    AND (w.consecutive_failures > 0 OR w.failing_since IS NOT NULL)
)
SELECT count(*) FROM done`

// FinishDelivery stores a delivery's new state and its attempt while the
// lease of token holds it; errs.Conflict when it no longer does. A
// delivered one also clears its endpoint's failure streak, in the same
// statement, so a success commits in one round trip.
func (q queries) FinishDelivery(ctx context.Context, d webhook.Delivery, a webhook.Attempt, token string) error {
	var n int
	err := sqlx.GetContext(ctx, q.ex, &n, finishDelivery, d.ID, d.Status, d.Attempts, d.NextAttemptAt, d.LastError,
		d.UpdatedAt, a.AttemptedAt, a.URL, a.StatusCode, a.LatencyMS, a.ResponseBody, a.Error, token)
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return errs.New(errs.Conflict, "the delivery's lease ran out")
	}
	return nil
}

const endpointFailed = `
UPDATE webhook_endpoints SET
  consecutive_failures = consecutive_failures + 1,
  failing_since = coalesce(failing_since, $3),
  disabled_at = CASE WHEN disabled_at IS NULL AND coalesce(failing_since, $3) <= $3 - $4 * interval '1 microsecond'
                     THEN $3 ELSE disabled_at END
WHERE merchant_id = $1 AND environment = $2
RETURNING disabled_at IS NOT DISTINCT FROM $3::timestamptz`

// EndpointFailed counts a failed attempt and disables the endpoint once it
// has failed for disableAfter without a success; disabled reports that
// this call disabled it.
func (q queries) EndpointFailed(ctx context.Context, scope tenant.Scope, now time.Time, disableAfter time.Duration) (bool, error) {
	var disabled bool
	err := sqlx.GetContext(ctx, q.ex, &disabled, endpointFailed, scope.MerchantID, scope.Env, now, disableAfter.Microseconds())
	return disabled, translate(err)
}

const enableEndpoint = `
WITH ep AS (
  UPDATE webhook_endpoints SET disabled_at = NULL, consecutive_failures = 0, failing_since = NULL, updated_at = $3
  WHERE merchant_id = $1 AND environment = $2
  RETURNING 1
), held AS (
  UPDATE webhook_deliveries SET next_attempt_at = least(next_attempt_at, created_at), updated_at = $3
  WHERE merchant_id = $1 AND environment = $2 AND status = 'pending' AND lease_token IS NULL
    AND EXISTS (SELECT 1 FROM ep)
)
SELECT count(*) FROM ep`

// EnableEndpoint enables the endpoint again and makes every held delivery
// due at its creation time, so they go out oldest first.
func (q queries) EnableEndpoint(ctx context.Context, scope tenant.Scope, now time.Time) error {
	var n int
	if err := sqlx.GetContext(ctx, q.ex, &n, enableEndpoint, scope.MerchantID, scope.Env, now); err != nil {
		return translate(err)
	}
	if n == 0 {
		return errs.New(errs.NotFound, "no webhook endpoint")
	}
	q.queued(n) // the deliveries it held are due
	return nil
}
