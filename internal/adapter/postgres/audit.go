package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Audit is the audit log's store on q's executor.
func (q queries) Audit() audit.Store { return q }

// lockAuditHead takes the merchant's chain head, creating it empty the
// first time, and locks it until the transaction ends: the upsert's
// conflict branch locks the row it returns.
const lockAuditHead = `
INSERT INTO audit_heads (merchant_id, seq, hash) VALUES ($1, 0, '')
ON CONFLICT (merchant_id) DO UPDATE SET seq = audit_heads.seq
RETURNING seq, hash`

// appendAudit writes the event and moves the head to it.
const appendAudit = `
WITH ins AS (
    INSERT INTO audit_events (id, merchant_id, seq, environment, action, actor_type, actor_id, actor_ip, created_at, details, version, hash)
    VALUES ($1, $2, $3, NULLIF($4, ''), $5, $6, $7, $8, $9, $10, $12, $11)
)
UPDATE audit_heads SET seq = $3, hash = $11 WHERE merchant_id = $2`

// RecordAudit appends e to its merchant's chain under the head's lock, in
// the caller's transaction (on the pool, in one of its own).
func (q queries) RecordAudit(ctx context.Context, e audit.Entry) error {
	if q.tx == nil {
		return q.withTx(ctx, func(tx queries) error { return tx.RecordAudit(ctx, e) })
	}
	var head struct {
		Seq  int64  `db:"seq"`
		Hash []byte `db:"hash"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &head, lockAuditHead, e.MerchantID); err != nil {
		return fmt.Errorf("record audit event: %w", translate(err))
	}
	ev := audit.New(e, head.Seq, head.Hash, time.Now(), q.db.auditKey)
	details, err := json.Marshal(ev.Details)
	if err != nil {
		return fmt.Errorf("record audit event: %w", err)
	}
	_, err = q.ex.ExecContext(ctx, appendAudit, ev.ID, ev.MerchantID, ev.Seq, string(ev.Env), ev.Action,
		ev.Actor.Type, ev.Actor.ID, ev.Actor.IP, ev.CreatedAt, details, ev.Hash, ev.Version)
	if err != nil {
		return fmt.Errorf("record audit event: %w", translate(err))
	}
	return nil
}

const auditColumns = `id, merchant_id, seq, COALESCE(environment, '') AS environment, action, actor_type, actor_id, actor_ip, created_at, details, version, hash`

type auditRow struct {
	ID         string    `db:"id"`
	MerchantID string    `db:"merchant_id"`
	Seq        int64     `db:"seq"`
	Env        string    `db:"environment"`
	Action     string    `db:"action"`
	ActorType  string    `db:"actor_type"`
	ActorID    string    `db:"actor_id"`
	ActorIP    string    `db:"actor_ip"`
	CreatedAt  time.Time `db:"created_at"`
	Details    []byte    `db:"details"`
	Version    int       `db:"version"`
	Hash       []byte    `db:"hash"`
}

func (r auditRow) domain() audit.Event {
	e := audit.Event{ID: r.ID, MerchantID: r.MerchantID, Seq: r.Seq, Env: tenant.Environment(r.Env), Action: r.Action,
		Actor: audit.Actor{Type: r.ActorType, ID: r.ActorID, IP: r.ActorIP}, CreatedAt: r.CreatedAt.UTC(), Version: r.Version, Hash: r.Hash}
	// A row whose details are not an object of strings (changed by hand)
	// reads as empty details, which its hash then refuses.
	if json.Unmarshal(r.Details, &e.Details) != nil || e.Details == nil {
		e.Details = map[string]string{}
	}
	return e
}

// listAudit pages by sequence number, which orders a merchant's events
// as they were appended.
const listAudit = `SELECT ` + auditColumns + `
FROM audit_events
WHERE merchant_id = $1 AND (environment = $2 OR environment IS NULL) AND seq < $3
ORDER BY seq DESC
LIMIT $4`

const auditCursor = `SELECT seq FROM audit_events WHERE merchant_id = $1 AND (environment = $2 OR environment IS NULL) AND id = $3`

// AuditEvents returns up to p.Limit+1 events newest first.
func (q queries) AuditEvents(ctx context.Context, scope tenant.Scope, p paging.Page) ([]audit.Event, error) {
	before := int64(1 << 62)
	if p.StartingAfter != "" {
		if err := sqlx.GetContext(ctx, q.ex, &before, auditCursor, scope.MerchantID, scope.Env, p.StartingAfter); err != nil {
			return nil, translate(err)
		}
	}
	var rows []auditRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, listAudit, scope.MerchantID, scope.Env, before, p.Limit+1); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, auditRow.domain), nil
}

const auditChain = `SELECT ` + auditColumns + `
FROM audit_events WHERE merchant_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`

// AuditChain returns up to limit events after sequence number after, in order.
func (q queries) AuditChain(ctx context.Context, merchantID string, after int64, limit int) ([]audit.Event, error) {
	var rows []auditRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, auditChain, merchantID, after, limit); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, auditRow.domain), nil
}

const auditHead = `SELECT seq, hash FROM audit_heads WHERE merchant_id = $1`

// AuditHead returns the merchant's chain head; 0 and nil when it has none.
func (q queries) AuditHead(ctx context.Context, merchantID string) (int64, []byte, error) {
	var head struct {
		Seq  int64  `db:"seq"`
		Hash []byte `db:"hash"`
	}
	err := sqlx.GetContext(ctx, q.ex, &head, auditHead, merchantID)
	if err != nil {
		if err = translate(err); errs.Is(err, errs.NotFound) {
			return 0, nil, nil
		}
		return 0, nil, err
	}
	return head.Seq, head.Hash, nil
}

const auditMerchants = `
SELECT merchant_id FROM audit_heads
UNION
SELECT DISTINCT merchant_id FROM audit_events
ORDER BY 1`

// AuditMerchants lists the merchants with a chain head or events.
func (q queries) AuditMerchants(ctx context.Context) ([]string, error) {
	var out []string
	return out, translate(sqlx.SelectContext(ctx, q.ex, &out, auditMerchants))
}

const auditHeads = `SELECT merchant_id, seq, hash FROM audit_heads WHERE seq > 0 ORDER BY merchant_id`

// AuditHeads returns every merchant's chain head.
func (q queries) AuditHeads(ctx context.Context) ([]audit.Head, error) {
	var rows []struct {
		MerchantID string `db:"merchant_id"`
		Seq        int64  `db:"seq"`
		Hash       []byte `db:"hash"`
	}
	if err := sqlx.SelectContext(ctx, q.ex, &rows, auditHeads); err != nil {
		return nil, translate(err)
	}
	out := make([]audit.Head, len(rows))
	for i, r := range rows {
		out[i] = audit.Head{MerchantID: r.MerchantID, Seq: r.Seq, Hash: r.Hash}
	}
	return out, nil
}

// auditAbout finds a merchant's events of one environment by the objects
// their details name, over that merchant's events in sequence order (the
// (merchant_id, seq) index); an empty ref matches nothing.
const auditAbout = `SELECT ` + auditColumns + `
FROM audit_events
WHERE merchant_id = $1 AND environment = $2
  AND (details->>'payment_id' = NULLIF($3, '') OR details->>'mandate_id' = NULLIF($4, '')
       OR details->>'funding_source_id' = NULLIF($5, ''))
ORDER BY seq
LIMIT $6`

// AuditEventsAbout returns up to limit events about refs, oldest first.
func (q queries) AuditEventsAbout(ctx context.Context, scope tenant.Scope, refs audit.Refs, limit int) ([]audit.Event, error) {
	var rows []auditRow
	err := sqlx.SelectContext(ctx, q.ex, &rows, auditAbout, scope.MerchantID, scope.Env, refs.PaymentID, refs.MandateID, refs.SourceID, limit)
	if err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, auditRow.domain), nil
}
