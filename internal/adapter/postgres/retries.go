package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
)

const paymentFiledAt = `
SELECT f.created_at FROM ach_entries e JOIN ach_files f ON f.id = e.file_id
WHERE e.merchant_id = $1 AND e.environment = $2 AND e.payment_id = $3 AND e.kind = 'payment'`

// PaymentFiledAt is when the ACH file holding a payment's entry was
// created; nil when the payment is in no file.
func (q queries) PaymentFiledAt(ctx context.Context, scope tenant.Scope, id string) (*time.Time, error) {
	var at []time.Time
	if err := sqlx.SelectContext(ctx, q.ex, &at, paymentFiledAt, scope.MerchantID, scope.Env, id); err != nil {
		return nil, translate(err)
	}
	if len(at) == 0 {
		return nil, nil
	}
	t := at[0].UTC()
	return &t, nil
}

const presentments = `SELECT ` + paymentReadColumns + `, ` + paymentLinks + ` FROM payments p
WHERE merchant_id = $1 AND environment = $2 AND retry_of = $3
ORDER BY retry_attempt`

// Presentments returns an original debit's re-presentments by attempt.
func (q queries) Presentments(ctx context.Context, scope tenant.Scope, originalID string) ([]payment.Payment, error) {
	var rows []paymentRow
	if err := sqlx.SelectContext(ctx, q.ex, &rows, presentments, scope.MerchantID, scope.Env, originalID); err != nil {
		return nil, translate(err)
	}
	return mapRows(rows, paymentRow.domain), nil
}

const subscriptionDebit = `SELECT ` + paymentReadColumns + `, ` + paymentLinks + ` FROM payments p
WHERE merchant_id = $1 AND environment = $2 AND subscription_id = $3 AND due_date = $4 AND attempt = $5`

// SubscriptionDebit returns a subscription's debit of a due date and attempt.
func (q queries) SubscriptionDebit(ctx context.Context, scope tenant.Scope, subscriptionID, dueDate string, attempt int) (payment.Payment, error) {
	return getOne[paymentRow](ctx, q.ex, subscriptionDebit, scope.MerchantID, scope.Env, subscriptionID, dueDate, attempt)
}
