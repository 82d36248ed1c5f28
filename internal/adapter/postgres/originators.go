package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
)

type originatorRow struct {
	MerchantID    string    `db:"merchant_id"`
	Environment   string    `db:"environment"`
	CompanyName   string    `db:"company_name"`
	CompanyID     string    `db:"company_id"`
	Assigned      bool      `db:"company_id_assigned"`
	Status        string    `db:"status"`
	PerEntryDebit int64     `db:"per_entry_debit_cents"`
	DailyDebit    int64     `db:"daily_debit_cents"`
	DailyCredit   int64     `db:"daily_credit_cents"`
	SameDay       bool      `db:"same_day"`
	Instant       bool      `db:"instant"`
	PerEntryInst  int64     `db:"per_entry_instant_credit_cents"`
	DailyInst     int64     `db:"daily_instant_credit_cents"`
	Purpose       string    `db:"default_purpose"`
	Rules         []byte    `db:"rule_thresholds"`
	UsageDay      *string   `db:"usage_day"`
	UsedDebit     int64     `db:"usage_debit_cents"`
	UsedCredit    int64     `db:"usage_credit_cents"`
	UpdatedAt     time.Time `db:"updated_at"`
}

func (r originatorRow) domain() originator.Originator {
	rules := map[string]string{}
	_ = json.Unmarshal(r.Rules, &rules) // the column's CHECK keeps it an object
	return originator.Originator{Scope: tenant.Scope{MerchantID: r.MerchantID, Env: tenant.Environment(r.Environment)},
		CompanyName: r.CompanyName, CompanyID: r.CompanyID, CompanyIDAssigned: r.Assigned, Status: r.Status, SameDay: r.SameDay, DefaultPurpose: payment.Purpose(r.Purpose), Rules: rules,
		UpdatedAt: r.UpdatedAt.UTC(), PerEntryDebitCents: r.PerEntryDebit, DailyDebitCents: r.DailyDebit,
		DailyCreditCents: r.DailyCredit, Instant: r.Instant, PerEntryInstantCreditCents: r.PerEntryInst, DailyInstantCreditCents: r.DailyInst, UsageDay: deref(r.UsageDay), UsedDebitCents: r.UsedDebit, UsedCreditCents: r.UsedCredit}
}

const selectOriginator = `
SELECT merchant_id, environment, company_name, company_id, company_id_assigned, status, per_entry_debit_cents, daily_debit_cents,
       daily_credit_cents, same_day, default_purpose, rule_thresholds, to_char(usage_day, 'YYYY-MM-DD') AS usage_day,
       usage_debit_cents, usage_credit_cents, updated_at,
       coalesce(instant, environment = 'sandbox') AS instant, per_entry_instant_credit_cents, daily_instant_credit_cents
FROM originators WHERE merchant_id = $1 AND environment = $2`

// Originator returns a scope's originator.
func (q queries) Originator(ctx context.Context, scope tenant.Scope) (originator.Originator, error) {
	return getOne[originatorRow](ctx, q.ex, selectOriginator, scope.MerchantID, scope.Env)
}

// OriginatorForUpdate is Originator with its row locked until the
// transaction ends.
func (q queries) OriginatorForUpdate(ctx context.Context, scope tenant.Scope) (originator.Originator, error) {
	return getOne[originatorRow](ctx, q.ex, selectOriginator+` FOR UPDATE`, scope.MerchantID, scope.Env)
}

const updateOriginator = `
UPDATE originators SET company_name = $3, company_id = $4, status = $5, per_entry_debit_cents = $6,
       daily_debit_cents = $7, daily_credit_cents = $8, same_day = $9, rule_thresholds = $10::jsonb,
       company_id_assigned = $11, default_purpose = $12, instant = $13, per_entry_instant_credit_cents = $14,
       daily_instant_credit_cents = $15, updated_at = now()
WHERE merchant_id = $1 AND environment = $2`

// UpdateOriginator stores an originator's settings (not its usage).
func (q queries) UpdateOriginator(ctx context.Context, o originator.Originator) error {
	rules, err := json.Marshal(o.Rules)
	if err != nil {
		return err
	}
	if o.Rules == nil {
		rules = []byte("{}")
	}
	res, err := q.ex.ExecContext(ctx, updateOriginator, o.Scope.MerchantID, o.Scope.Env, o.CompanyName, o.CompanyID,
		o.Status, o.PerEntryDebitCents, o.DailyDebitCents, o.DailyCreditCents, o.SameDay, string(rules), o.CompanyIDAssigned, o.DefaultPurpose,
		o.Instant, o.PerEntryInstantCreditCents, o.DailyInstantCreditCents)
	return oneRow(res, err, errs.NotFound)
}

const originatorCompany = `SELECT company_name, company_id FROM originators WHERE merchant_id = $1 AND environment = $2`

// OriginatorCompany is the company a scope's entries go out under.
func (q queries) OriginatorCompany(ctx context.Context, scope tenant.Scope) (name, id string, err error) {
	var r struct {
		Name string `db:"company_name"`
		ID   string `db:"company_id"`
	}
	if err := sqlx.GetContext(ctx, q.ex, &r, originatorCompany, scope.MerchantID, scope.Env); err != nil {
		return "", "", translate(err)
	}
	return r.Name, r.ID, nil
}
