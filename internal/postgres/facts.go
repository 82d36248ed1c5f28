package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
)

// The account check reads an account's history in one of two ways. A
// source's reads (its GET, lists) and a creation under block_fail, whose
// answer decides whether anything is written, read it with
// accountFactsOfF before answering. Any other creation does not: a read of
// its own is a round trip of its own, which costs PostgreSQL several times
// what the read does (the backend's wake-up and reply at the creation's
// rate), and a new account has no history. So that creation is answered as
// for an account with no history (funding.AccountFacts.Unread), and its
// statement, createSources, checks that with accountHistoryOfF, one probe
// of the same index inside the statement it runs anyway; an account with a
// history refuses the row, and the caller reads the history and creates
// again with it.

// otherFactsOfF are the facts about the account of f (a row with
// environment, account_fp, merchant_id and customer_id) that its check
// counts: all but f's own customer's links.
const otherFactsOfF = `a.environment = f.environment AND a.account_fp = f.account_fp
          AND NOT (a.kind = 'linked' AND a.merchant_id = f.merchant_id AND a.customer_id = f.customer_id)`

// accountHistoryOfF is whether the account of f has any fact its check
// counts: one index probe of account_facts.
const accountHistoryOfF = `EXISTS (SELECT 1 FROM account_facts a WHERE ` + otherFactsOfF + `)`

// accountFactsOfF reads the history of the account of f for the account
// check: per kind and code the latest time, and per other customer that
// linked it (f's customer apart) the latest link. It answers kinds, codes
// and times only, never whose; one index range of account_facts, at most
// 64 groups, newest first.
const accountFactsOfF = `
  SELECT array_agg(g.kind) AS ck_kinds, array_agg(g.code) AS ck_codes, array_agg(g.last) AS ck_at
  FROM (SELECT a.kind, coalesce(a.code, '') AS code, (extract(epoch FROM max(a.at)) * 1000000)::bigint AS last
        FROM account_facts a
        WHERE ` + otherFactsOfF + `
        GROUP BY a.kind, a.code, CASE WHEN a.kind = 'linked' THEN a.merchant_id || ' ' || a.customer_id END
        ORDER BY last DESC
        LIMIT 64) g`

// factCols are accountFactsOfF's columns.
type factCols struct {
	Kinds pq.StringArray `db:"ck_kinds"`
	Codes pq.StringArray `db:"ck_codes"`
	At    pq.Int64Array  `db:"ck_at"` // microseconds since the epoch
}

func (r factCols) domain() funding.AccountFacts {
	var f funding.AccountFacts
	for i, kind := range r.Kinds {
		if i >= len(r.Codes) || i >= len(r.At) {
			break
		}
		at := time.UnixMicro(r.At[i]).UTC()
		switch {
		case kind == funding.FactVerified:
			f.Verified = true
		case kind == funding.FactLinked:
			f.OtherLinks = append(f.OtherLinks, at)
		case r.Codes[i] != "":
			if f.Codes == nil {
				f.Codes = map[string]time.Time{}
			}
			if at.After(f.Codes[r.Codes[i]]) {
				f.Codes[r.Codes[i]] = at
			}
		}
	}
	return f
}

const selectAccountFacts = `
SELECT ck.ck_kinds, ck.ck_codes, ck.ck_at
FROM (SELECT $1::text AS environment, $2::bytea AS account_fp, $3::text AS merchant_id, $4::text AS customer_id) f
CROSS JOIN LATERAL (` + accountFactsOfF + `) ck`

// AccountFacts reads the history of an account fingerprint in env, with
// the links of merchantID's customerID left out of OtherLinks.
func (q queries) AccountFacts(ctx context.Context, env tenant.Environment, fp []byte, merchantID, customerID string) (funding.AccountFacts, error) {
	var r factCols
	if err := sqlx.GetContext(ctx, q.ex, &r, selectAccountFacts, env, fp, merchantID, customerID); err != nil {
		return funding.AccountFacts{}, translate(err)
	}
	return r.domain(), nil
}

const insertAccountFact = `
INSERT INTO account_facts (environment, account_fp, kind, code, merchant_id, customer_id, funding_source_id, at)
VALUES ($1, $2, $3, NULLIF($4, ''), $5, $6, $7, $8)`

// RecordAccountFact stores one fact about an account.
func (q queries) RecordAccountFact(ctx context.Context, f funding.AccountFact) error {
	_, err := q.ex.ExecContext(ctx, insertAccountFact, f.Env, f.AccountFP, f.Kind, f.Code, f.MerchantID,
		f.CustomerID, f.SourceID, f.At)
	return translate(err)
}
