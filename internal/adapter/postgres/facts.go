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
// again with it. History here is a fact the check counts: an account that
// other merchants only linked has none, so its creation takes the path of
// a new account's and shows nothing of those links, not even in its time.

// A source keeps its check (migration 00042: check_result, check_reasons,
// check_expires_at, check_seq), so a read of a source reads no history
// while the kept answer holds; a trigger on account_facts (migration
// 00052, a row trigger that fires for every fact but a link) marks the
// kept answers a new fact can change. A list's one statement carries the
// history's read, storedFactsOfF, gated on each source's own row: it runs
// only when the kept answer does not hold (none kept, the account's
// history changed since, or a counted fact left its window by the
// database's clock), and PostgreSQL skips it otherwise (a one-time filter
// on the outer row, so the index range is not even opened). A source read
// alone comes without it (selectSource). A write that locks a source
// reads its history always (allFactsOfF): it may record a fact and answer
// with it.

// otherFactsOfF are the facts about the account of f (a row with
// environment, account_fp, merchant_id and the source's id) that its check
// counts: all but links, which count for no one (a link nobody used says
// nothing about the account, and counting it would let any merchant taint
// another's check and learn who else linked the account), f's own
// merchant's payments, which count only as another merchant's customer's
// use, and the source's own verification, which is no history of the
// account before it (verified_before means someone verified it before
// this source did).
const otherFactsOfF = `a.environment = f.environment AND a.account_fp = f.account_fp AND a.kind <> 'linked'
          AND (a.kind <> 'paid' OR a.merchant_id <> f.merchant_id)
          AND (a.kind <> 'verified' OR a.funding_source_id <> f.id)`

// otherUseOfF is whether the fact a is a use of the account (verified or
// paid) by a customer of a merchant other than f's: the uses
// many_customers counts, one group per such customer.
const otherUseOfF = `a.kind IN ('verified', 'paid') AND a.merchant_id <> f.merchant_id`

// accountHistoryOfF is whether the account of f has any fact its check
// counts: one index probe of account_facts.
const accountHistoryOfF = `EXISTS (SELECT 1 FROM account_facts a WHERE ` + otherFactsOfF + `)`

// accountFactsOfF reads the history of the account of f for the account
// check: per kind and code the latest time, and per customer of another
// merchant that verified the account or paid with it the latest such use
// (kind usedKind; verified tells whether a verification was among them).
// It answers kinds, codes and times only, never whose; one index range of
// account_facts, at most 64 groups, newest first. It is written in three
// parts (factsSelect, factsFrom, factsGroup) around its condition so that
// storedFactsOfF can add one.
const accountFactsOfF = factsSelect + factsFrom + otherFactsOfF + factsGroup

// usedKind is the kind accountFactsOfF gives a group of another
// merchant's customer's uses.
const usedKind = "used"

const factsSelect = `
  SELECT array_agg(g.kind) AS ck_kinds, array_agg(g.code) AS ck_codes, array_agg(g.last) AS ck_at,
         array_agg(g.verified) AS ck_verified`

const factsFrom = `
  FROM (SELECT CASE WHEN ` + otherUseOfF + ` THEN '` + usedKind + `' ELSE a.kind END AS kind,
               coalesce(a.code, '') AS code, bool_or(a.kind = 'verified') AS verified,
               (extract(epoch FROM max(a.at)) * 1000000)::bigint AS last
        FROM account_facts a
        WHERE `

const factsGroup = `
        GROUP BY 1, a.code, CASE WHEN ` + otherUseOfF + ` THEN a.merchant_id || ' ' || a.customer_id END
        ORDER BY last DESC
        LIMIT 64) g`

// keptCheckMissing is whether the source row f keeps no check that holds
// by the database's clock.
const keptCheckMissing = `(f.check_result IS NULL OR f.check_expires_at <= now())`

// storedFactsOfF is accountFactsOfF for a source row f whose kept check
// does not hold (ck_read true); for any other row its arrays are NULL and
// ck_read false. The condition stands inside the grouped subquery, where
// it refers to the outer row only, so PostgreSQL plans it as a one-time
// filter and never opens the index when it is false.
const storedFactsOfF = factsSelect + `, ` + keptCheckMissing + ` AS ck_read` + factsFrom + keptCheckMissing + `
          AND ` + otherFactsOfF + factsGroup

// allFactsOfF is accountFactsOfF with ck_read, for a write's read.
const allFactsOfF = factsSelect + `, true AS ck_read` + factsFrom + otherFactsOfF + factsGroup

// factCols are accountFactsOfF's columns.
type factCols struct {
	Read  *bool          `db:"ck_read"` // the history was read (storedFactsOfF, allFactsOfF); NULL elsewhere
	Kinds pq.StringArray `db:"ck_kinds"`
	Codes pq.StringArray `db:"ck_codes"`
	At    pq.Int64Array  `db:"ck_at"` // microseconds since the epoch
	// Verified tells, per group, whether a verification was among its facts.
	Verified pq.BoolArray `db:"ck_verified"`
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
		case kind == usedKind:
			f.OtherUses = append(f.OtherUses, at)
			if i < len(r.Verified) && r.Verified[i] {
				f.Verified = true
			}
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
SELECT ck.ck_kinds, ck.ck_codes, ck.ck_at, ck.ck_verified
FROM (SELECT $1::text AS environment, $2::bytea AS account_fp, $3::text AS merchant_id, $4::text AS id) f
CROSS JOIN LATERAL (` + accountFactsOfF + `) ck`

// AccountFacts reads the history of an account fingerprint in env as the
// check of merchantID's source sourceID counts it: OtherUses holds the
// uses by other merchants' customers only, and the source's own
// verification is left out.
func (q queries) AccountFacts(ctx context.Context, env tenant.Environment, fp []byte, merchantID, sourceID string) (funding.AccountFacts, error) {
	var r factCols
	if err := sqlx.GetContext(ctx, q.ex, &r, selectAccountFacts, env, fp, merchantID, sourceID); err != nil {
		return funding.AccountFacts{}, translate(err)
	}
	return r.domain(), nil
}

const storeAccountCheck = `
UPDATE funding_sources SET check_result = $4, check_reasons = $5, check_expires_at = $6
WHERE ` + byID + ` AND check_seq = $7`

// StoreAccountCheck keeps c on the source as its check until expires (nil:
// no time changes it), unless the account's history changed since the
// source was read with seq (check_seq moved on): then nothing is written,
// and the next read computes the check again.
func (q queries) StoreAccountCheck(ctx context.Context, scope tenant.Scope, id string, c funding.AccountCheck, expires *time.Time, seq int64) error {
	_, err := q.ex.ExecContext(ctx, storeAccountCheck, scope.MerchantID, scope.Env, id, c.Result,
		pq.StringArray(c.Reasons), expires, seq)
	return translate(err)
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
