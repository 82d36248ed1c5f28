package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/overview"
)

// Overview is the dashboard overview's store on q's executor.
func (q queries) Overview() overview.Store { return q }

// verificationFunnels groups the window's sources by the method their
// latest verification recorded (md_method, kept by the micro_deposits
// trigger): micro-deposits, an instant credit's code, or none for a source
// Verified when it was created (a processor token or the merchant's own
// verification). A source not yet initiated counts under micro-deposits,
// the method an initiation takes by default; an "auto" initiation counts
// under the method it took.
const verificationFunnels = `
WITH methods AS (
  SELECT CASE WHEN md_method = 'instant' THEN 'instant'
              WHEN md_seq IS NULL AND status = 'Verified' THEN 'at-creation'
              ELSE 'micro-deposits' END AS method,
         status, md_seq IS NOT NULL AS initiated, verified_at - created_at AS took
  FROM funding_sources
  WHERE merchant_id = $1 AND environment = $2 AND created_at >= $3
)
SELECT method,
       count(*) AS created,
       count(*) FILTER (WHERE initiated OR method = 'at-creation') AS initiated,
       count(*) FILTER (WHERE status = 'Verified') AS verified,
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM took))
                FILTER (WHERE status = 'Verified'), 0) AS median_seconds
FROM methods GROUP BY method`

// VerificationFunnels returns each method's funnel for sources created since since.
func (q queries) VerificationFunnels(ctx context.Context, scope tenant.Scope, since time.Time) ([]overview.Funnel, error) {
	var rows []struct {
		Method    string  `db:"method"`
		Created   int     `db:"created"`
		Initiated int     `db:"initiated"`
		Verified  int     `db:"verified"`
		Median    float64 `db:"median_seconds"`
	}
	if err := selectRows(ctx, q, &rows, verificationFunnels, scope.MerchantID, scope.Env, since); err != nil {
		return nil, err
	}
	out := make([]overview.Funnel, len(rows))
	for i, r := range rows {
		out[i] = overview.Funnel{Method: r.Method, Created: r.Created, Initiated: r.Initiated, Verified: r.Verified,
			MedianToVerify: time.Duration(r.Median * float64(time.Second))}
	}
	return out, nil
}

// dailyActivity counts, per UTC day, the webhook attempts of the scope's
// deliveries (2xx ones and the 95th percentile of their latency) and its
// debits (those that came back with a return code), counted as the return
// rates count them (returnCounts): canceled and held debits never went
// out, so they count in neither.
const dailyActivity = `
WITH att AS (
  SELECT date_trunc('day', a.attempted_at AT TIME ZONE 'UTC') AS day,
         count(*) AS attempts,
         count(*) FILTER (WHERE a.status_code BETWEEN 200 AND 299) AS delivered,
         percentile_cont(0.95) WITHIN GROUP (ORDER BY a.latency_ms) AS p95
  FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
  WHERE d.merchant_id = $1 AND d.environment = $2 AND a.attempted_at >= $3
  GROUP BY 1
), deb AS (
  SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AS day,
         count(*) AS debits,
         count(*) FILTER (WHERE status = 'failed') AS returned
  FROM payments
  WHERE merchant_id = $1 AND environment = $2 AND direction = 'debit' AND created_at >= $3
    AND status NOT IN ('canceled', 'held')
  GROUP BY 1
)
SELECT coalesce(att.day, deb.day) AT TIME ZONE 'UTC' AS day,
       coalesce(att.attempts, 0) AS attempts, coalesce(att.delivered, 0) AS delivered,
       coalesce(round(att.p95), 0)::int AS p95, coalesce(deb.debits, 0) AS debits, coalesce(deb.returned, 0) AS returned
FROM att FULL JOIN deb ON att.day = deb.day`

// DailyActivity returns the days since since with webhook attempts or debits.
func (q queries) DailyActivity(ctx context.Context, scope tenant.Scope, since time.Time) ([]overview.Day, error) {
	var rows []struct {
		Day       time.Time `db:"day"`
		Attempts  int       `db:"attempts"`
		Delivered int       `db:"delivered"`
		P95       int       `db:"p95"`
		Debits    int       `db:"debits"`
		Returned  int       `db:"returned"`
	}
	if err := selectRows(ctx, q, &rows, dailyActivity, scope.MerchantID, scope.Env, since); err != nil {
		return nil, err
	}
	out := make([]overview.Day, len(rows))
	for i, r := range rows {
		out[i] = overview.Day{Date: r.Day.UTC(), Attempts: r.Attempts, Delivered: r.Delivered, P95LatencyMS: r.P95,
			Debits: r.Debits, Returned: r.Returned}
	}
	return out, nil
}

// selectRows runs a query into dest on q's executor.
func selectRows(ctx context.Context, q queries, dest any, query string, args ...any) error {
	return translate(sqlx.SelectContext(ctx, q.ex, dest, query, args...))
}
