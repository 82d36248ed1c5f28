package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

// TestACreationAnsweredWithoutHistoryNeedsAnAccountWithoutOne: a source
// answered without its account's history (Facts.Unread) is created when
// the account has none the check counts (links of any customer, of any
// merchant; its own merchant's payments), and refused with nothing
// written when it has a counted fact (a verification, another merchant's
// payment, a return), on the pool, in a transaction and as a keyed
// request; the same source answered with its history read is created.
func TestACreationAnsweredWithoutHistoryNeedsAnAccountWithoutOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	scope, cus, now := batchTestScope(t, db, "mer_hist")
	fp := func(s string) []byte { h := sha256.Sum256([]byte("account " + s)); return h[:] }
	fact := func(account, kind, code, merchantID, customerID string) {
		t.Helper()
		if err := db.RecordAccountFact(ctx, funding.AccountFact{Env: scope.Env, AccountFP: fp(account), Kind: kind, Code: code,
			MerchantID: merchantID, CustomerID: customerID, SourceID: "fs_earlier", At: now.Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	fact("own", funding.FactLinked, "", scope.MerchantID, cus)
	fact("linked", funding.FactLinked, "", scope.MerchantID, "cus_other")
	fact("linked", funding.FactLinked, "", "mer_other", "cus_elsewhere")
	fact("own_paid", funding.FactPaid, "", scope.MerchantID, "cus_other")
	fact("verified", funding.FactVerified, "", scope.MerchantID, "cus_other")
	fact("paid", funding.FactPaid, "", "mer_other", "cus_elsewhere")
	fact("returned", funding.FactReturned, "R03", scope.MerchantID, "cus_other")
	n := 0
	source := func(account, id string, unread bool) (funding.Source, []event.Event) {
		n++
		k := newKeyedCreation(scope, cus, id, "key-"+id, fmt.Sprintf("5000%04d", n), now)
		k.src.AccountFP, k.src.Facts = fp(account), funding.AccountFacts{Unread: unread}
		return k.src, []event.Event{event.New(scope, event.FundingSourceCreated, map[string]string{"funding_source_id": id}, now)}
	}
	written := func(id string) (n int) {
		t.Helper()
		if err := db.Pool().GetContext(ctx, &n, `SELECT (SELECT count(*) FROM funding_sources WHERE id = $1)
			+ (SELECT count(*) FROM account_numbers WHERE funding_source_id = $1)
			+ (SELECT count(*) FROM account_facts WHERE funding_source_id = $1)
			+ (SELECT count(*) FROM events WHERE data->>'funding_source_id' = $1)
			+ (SELECT count(*) FROM idempotency_keys WHERE key = 'key-' || $1)`, id); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for _, account := range []string{"own", "linked", "own_paid"} {
		src, evs := source(account, "fs_"+account, true)
		if _, created, err := db.CreateSource(ctx, src, evs); err != nil || !created {
			t.Errorf("an account with only %s facts: created %v, %v", account, created, err)
		}
	}
	for _, account := range []string{"verified", "paid", "returned"} {
		src, evs := source(account, "fs_pool_"+account, true)
		if _, created, err := db.CreateSource(ctx, src, evs); !errors.Is(err, funding.ErrAccountHistory) || created {
			t.Errorf("%s, on the pool: created %v, %v; want ErrAccountHistory", account, created, err)
		}
		src, evs = source(account, "fs_tx_"+account, true)
		err := db.Funding().WithTx(ctx, func(tx funding.Store) error {
			_, _, err := tx.CreateSource(ctx, src, evs)
			return err
		})
		if !errors.Is(err, funding.ErrAccountHistory) {
			t.Errorf("%s, in a transaction: %v; want ErrAccountHistory", account, err)
		}
		src, evs = source(account, "fs_keyed_"+account, true)
		req := idempotency.Request{Scope: scope, Key: "key-" + src.ID, Hash: fp(src.ID), Now: now}
		created, replay, err := db.CreateSourceKeyed(ctx, src, evs, req, idempotency.Response{Status: 200, Body: []byte(`{}`)})
		if created || replay != nil || err != nil {
			t.Errorf("%s, keyed: created %v, replay %v, %v; want none (the general path)", account, created, replay, err)
		}
		for _, id := range []string{"fs_pool_" + account, "fs_tx_" + account, "fs_keyed_" + account} {
			if n := written(id); n != 0 {
				t.Errorf("%s: %d rows written", id, n)
			}
		}
		src, evs = source(account, "fs_read_"+account, false)
		if _, created, err := db.CreateSource(ctx, src, evs); err != nil || !created {
			t.Errorf("%s with its history read: created %v, %v", account, created, err)
		}
	}
}
