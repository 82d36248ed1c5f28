package postgres

import (
	"context"
	"errors"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/webhook"
)

// store is queries as the Store of one domain, S: its WithTx hands fn that
// domain's store on the transaction, so a domain service names the
// transaction it writes in (tx.InsertPayment(...)) and never finds it in
// a context.
type store[S any] struct {
	queries
	as func(queries) S
}

func (s store[S]) WithTx(ctx context.Context, fn func(tx S) error) error {
	return s.withTx(ctx, func(tx queries) error { return fn(s.as(tx)) })
}

// Idempotent runs fn on the domain's store on the transaction of an
// idempotent request (DB.Idempotent), for a use case that owns its
// request's whole flow (funding.Service.CreateKeyed). A request commits on
// its own, so on a transaction's store it refuses.
func (s store[S]) Idempotent(ctx context.Context, req idempotency.Request, fn func(tx S) (idempotency.Response, bool)) (*idempotency.Response, error) {
	if s.tx != nil {
		return nil, errors.New("idempotent request: runs on the pool's store only, not inside a transaction")
	}
	return s.db.Idempotent(ctx, req, func(tx Tx) (idempotency.Response, bool) { return fn(s.as(tx.queries)) })
}

// Stores are the domains' stores on one executor. DB, Tx and every
// domain's store from this package implement it.
type Stores interface {
	Merchants() merchant.Store
	Customers() customer.Store
	Funding() funding.Store
	Payments() payment.Store
	Webhooks() webhook.Store
	ACH() ach.Store
	Originators() originator.Store
}

// The domains' stores on q's executor. A use case that spans domains (a
// removal that ends subscriptions, a return applied to a payment) reaches
// the other domain's store on the same transaction through these.

func (q queries) Merchants() merchant.Store { return store[merchant.Store]{q, queries.Merchants} }
func (q queries) Customers() customer.Store { return store[customer.Store]{q, queries.Customers} }
func (q queries) Funding() funding.Store    { return store[funding.Store]{q, queries.Funding} }
func (q queries) Payments() payment.Store   { return store[payment.Store]{q, queries.Payments} }
func (q queries) Webhooks() webhook.Store   { return store[webhook.Store]{q, queries.Webhooks} }
func (q queries) ACH() ach.Store            { return store[ach.Store]{q, queries.ACH} }
func (q queries) Originators() originator.Store {
	return store[originator.Store]{q, queries.Originators}
}

// Consequences is the funding and payment stores on one transaction, for
// what a return, a block or a removal sets off across the two.
func (q queries) Consequences() consequence.Store {
	return store[consequence.Tx]{q, func(q queries) consequence.Tx { return q }}
}
