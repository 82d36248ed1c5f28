package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
)

// The SQL of an originator's limits (payment/limits.go), shared by the
// statements that create payments. In each, $1 and $2 are the merchant
// and environment, and the fragments name the statement's own parameters
// for the banking day (DAY), direction (DIR) and amount in cents (CENTS).

// originatorLocked is a CTE, org: the originator locked FOR UPDATE, with
// its usage of the banking day. The lock hands the statement the latest
// committed usage, even when it waited for a concurrent payment's.
const originatorLocked = originatorUsage + `
  FOR UPDATE OF o
)`

// originatorUsage is org without its lock and closing parenthesis.
const originatorUsage = `org AS (
  SELECT o.status, o.per_entry_debit_cents, o.daily_debit_cents, o.daily_credit_cents, o.company_id_assigned, o.default_purpose,
         CASE WHEN o.usage_day = DAY::date THEN o.usage_debit_cents ELSE 0 END AS used_debit,
         CASE WHEN o.usage_day = DAY::date THEN o.usage_credit_cents ELSE 0 END AS used_credit
  FROM originators o WHERE o.merchant_id = $1 AND o.environment = $2`

// originatorRefusal is the originator's limits rule, over org: the name
// of its refusal of a payment (payment.RefusedNotActive or a limit's
// name), NULL when it takes it; no org row (no originator) refuses as not
// active. The statement that decides by it reports the name, so the
// decision and its reason are one.
const originatorRefusal = `CASE WHEN org.status IS DISTINCT FROM 'active' THEN 'originator_not_active'
    WHEN DIR::text = 'debit' AND CENTS::bigint > org.per_entry_debit_cents THEN 'per_entry_debit'
    WHEN DIR::text = 'debit' AND org.used_debit + CENTS::bigint > org.daily_debit_cents THEN 'daily_debit'
    WHEN DIR::text <> 'debit' AND org.used_credit + CENTS::bigint > org.daily_credit_cents THEN 'daily_credit' END`

// originatorCount is a CTE, used: the originator's usage of the banking
// day with the payment ins inserted added to it. A payment of an older
// day than the row's (a slow clock) is not counted rather than reset it.
const originatorCount = `used AS (
  UPDATE originators o SET
    usage_debit_cents = CASE WHEN o.usage_day > DAY::date THEN o.usage_debit_cents
        ELSE CASE WHEN o.usage_day = DAY::date THEN o.usage_debit_cents ELSE 0 END
           + CASE WHEN DIR::text = 'debit' THEN CENTS::bigint ELSE 0 END END,
    usage_credit_cents = CASE WHEN o.usage_day > DAY::date THEN o.usage_credit_cents
        ELSE CASE WHEN o.usage_day = DAY::date THEN o.usage_credit_cents ELSE 0 END
           + CASE WHEN DIR::text = 'debit' THEN 0 ELSE CENTS::bigint END END,
    usage_day = GREATEST(o.usage_day, DAY::date)
  FROM ins WHERE o.merchant_id = $1 AND o.environment = $2
  RETURNING 1
)`

// originatorTermsColumns are org's columns as a statement reports them.
const originatorTermsColumns = `org.status AS org_status, org.per_entry_debit_cents AS org_per_entry_debit,
       org.daily_debit_cents AS org_daily_debit, org.daily_credit_cents AS org_daily_credit,
       org.used_debit AS org_used_debit, org.used_credit AS org_used_credit,
       org.company_id_assigned AS org_company_id_assigned, org.default_purpose AS org_default_purpose`

// withParams is sql with the fragments' names replaced by the
// statement's parameters.
func withParams(sql, day, dir, cents string) string {
	return strings.NewReplacer("DAY", day, "DIR", dir, "CENTS", cents).Replace(sql)
}

// termsRow is originatorTermsColumns; NULLs when the scope has no
// originator.
type termsRow struct {
	Status        *string `db:"org_status"`
	PerEntryDebit *int64  `db:"org_per_entry_debit"`
	DailyDebit    *int64  `db:"org_daily_debit"`
	DailyCredit   *int64  `db:"org_daily_credit"`
	UsedDebit     *int64  `db:"org_used_debit"`
	UsedCredit    *int64  `db:"org_used_credit"`
	Assigned      *bool   `db:"org_company_id_assigned"`
	Purpose       *string `db:"org_default_purpose"`
}

func (r termsRow) domain() payment.Terms {
	z := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	return payment.Terms{Status: deref(r.Status), PerEntryDebit: z(r.PerEntryDebit), DailyDebit: z(r.DailyDebit),
		DailyCredit: z(r.DailyCredit), UsedDebit: z(r.UsedDebit), UsedCredit: z(r.UsedCredit),
		CompanyIDAssigned: r.Assigned != nil && *r.Assigned, DefaultPurpose: deref(r.Purpose)}
}

// dayOf is the banking day p counts toward.
func dayOf(p payment.Payment) string {
	if p.Day != "" {
		return p.Day
	}
	return payment.BankingDay(p.CreatedAt).Format(time.DateOnly)
}

var originatorTerms = `WITH ` + withParams(originatorUsage, "$3", "", "") + `)
SELECT ` + originatorTermsColumns + `, ` + withParams(originatorRefusal, "$3", "'debit'", "$4") + ` AS refusal FROM org`

// OriginatorTerms reads a scope's originator with its usage of day,
// without locking it, and its refusal of a debit of cents
// (originatorRefusal); errs.NotFound when it has none.
func (q queries) OriginatorTerms(ctx context.Context, scope tenant.Scope, day string, cents int64) (payment.Terms, error) {
	var r struct {
		termsRow
		Refusal *string `db:"refusal"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, originatorTerms, scope.MerchantID, scope.Env, day, cents); err != nil {
		return payment.Terms{}, translate(err)
	}
	t := r.termsRow.domain()
	t.Refusal = deref(r.Refusal)
	return t, nil
}
