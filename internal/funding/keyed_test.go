package funding_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// keyed makes keyed creations under one scope and counts the answers
// CreateKeyed asks for.
type keyed struct {
	t       *testing.T
	f       *fixture.Fixture
	scope   tenant.Scope
	answers int
}

// answer renders a creation's answer as a handler would: the source as
// JSON, or a refusal's code (a 5xx for anything that is no *errs.Error).
func (k *keyed) answer(src funding.Source, err error) idempotency.Response {
	k.answers++
	if err != nil {
		if e, ok := errs.As(err); ok {
			return idempotency.Response{Status: http.StatusBadRequest, Body: []byte(e.Code)}
		}
		return idempotency.Response{Status: http.StatusInternalServerError, Body: []byte(err.Error())}
	}
	b, err := json.Marshal(src)
	if err != nil {
		k.t.Fatal(err)
	}
	return idempotency.Response{Status: http.StatusOK, Body: b}
}

// create runs one keyed creation of in under key, with body hash hash.
func (k *keyed) create(c funding.Caller, kind funding.Kind, in funding.Input, key, hash string) (idempotency.Response, bool) {
	k.t.Helper()
	req := idempotency.Request{Scope: k.scope, Key: key, Hash: []byte(hash), Now: k.f.Clock.Now()}
	resp, replayed, err := k.f.Funding.CreateKeyed(ctx, c, kind, in, req, k.answer)
	if err != nil {
		k.t.Fatalf("create under %s: %v", key, err)
	}
	return resp, replayed
}

// stored is the response stored under key.
func (k *keyed) stored(key string) []byte {
	k.t.Helper()
	var body []byte
	if err := k.f.SQL().Get(&body, `SELECT response_body FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND key = $3`,
		k.scope.MerchantID, string(k.scope.Env), key); err != nil {
		k.t.Fatalf("stored response under %s: %v", key, err)
	}
	return body
}

// sources counts the scope's sources.
func (k *keyed) sources() (n int) {
	k.t.Helper()
	if err := k.f.SQL().Get(&n, `SELECT count(*) FROM funding_sources WHERE merchant_id = $1`, k.scope.MerchantID); err != nil {
		k.t.Fatal(err)
	}
	return n
}

// TestCreateKeyedFallsBackOnItsOwn: a keyed creation the one-statement
// write refuses (the account has a history its first answer was not made
// with, or the holder type was guessed wrong) is written once on the
// general path, with the answer made with what the statement found stored
// under the key; the same key again replays that answer byte for byte and
// writes nothing.
func TestCreateKeyedFallsBackOnItsOwn(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	a, b := f.Sandbox("Alpha"), f.Sandbox("Beta")
	// An account another merchant's customer verified and had returned
	// closed: a history, which b's first answer is not made with.
	returned := f.VerifiedSource(a, f.Customer(a), "61616161")
	if err := f.DB.Funding().WithTx(ctx, func(tx funding.Store) error {
		_, err := f.Funding.ApplyReturnTx(ctx, tx, a, returned.ID, "R02")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	biz, err := f.Customers.Create(ctx, b, customer.Input{FirstName: "Bea", LastName: "Baker", Email: "bea@example.com",
		BusinessName: ptr("Bea's Bakery LLC")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		in    funding.Input
		check func(t *testing.T, got map[string]any)
	}{
		{"account with a history", input(f.Customer(b), "61616161"), func(t *testing.T, got map[string]any) {
			check, _ := got["account_check"].(map[string]any)
			if check["result"] != funding.CheckFail {
				t.Errorf("account_check = %v, want result %s", got["account_check"], funding.CheckFail)
			}
			if reasons, _ := check["reasons"].([]any); !slices.Contains(reasons, any("returned_closed")) {
				t.Errorf("account_check reasons = %v, want returned_closed among them", check["reasons"])
			}
		}},
		{"holder guessed wrong", input(biz.ID, "62626262"), func(t *testing.T, got map[string]any) {
			if got["account_holder_type"] != funding.HolderCompany {
				t.Errorf("account_holder_type = %v, want %s", got["account_holder_type"], funding.HolderCompany)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := &keyed{t: t, f: f, scope: b}
			key := "key-" + c.in.AccountNumber
			before := k.sources()
			first, replayed := k.create(funding.Caller{Scope: b}, funding.ForMicroDeposits, c.in, key, "body-"+key)
			if replayed || first.Status != http.StatusOK {
				t.Fatalf("first: status %d, replayed %v: %s", first.Status, replayed, first.Body)
			}
			// The one-statement answer, then the general path's.
			if k.answers != 2 {
				t.Errorf("%d answers rendered, want 2 (the statement's, then the general path's)", k.answers)
			}
			var got map[string]any
			if err := json.Unmarshal(first.Body, &got); err != nil {
				t.Fatal(err)
			}
			c.check(t, got)
			if stored := k.stored(key); !bytes.Equal(stored, first.Body) {
				t.Errorf("stored under the key:\n%s\nanswered:\n%s", stored, first.Body)
			}
			if got, want := k.sources(), before+1; got != want {
				t.Errorf("%d sources, want %d", got, want)
			}
			again, replayed := k.create(funding.Caller{Scope: b}, funding.ForMicroDeposits, c.in, key, "body-"+key)
			if !replayed || again.Status != first.Status || !bytes.Equal(again.Body, first.Body) {
				t.Errorf("again: status %d, replayed %v:\n%s\nwant the first answer replayed:\n%s", again.Status, replayed, again.Body, first.Body)
			}
			if got, want := k.sources(), before+1; got != want {
				t.Errorf("after the replay %d sources, want %d", got, want)
			}
		})
	}
}

// TestCreateKeyedStoresARefusal: a creation prepare refuses is answered
// on the general path, and the refusal is stored under the key like any
// answer; a different request under the key is idempotency_key_reused.
func TestCreateKeyedStoresARefusal(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	k := &keyed{t: t, f: f, scope: scope}
	in := input(f.Customer(scope), "63636363")
	// The key lacks the on-demand permission.
	first, replayed := k.create(funding.Caller{Scope: scope}, funding.OnDemand, in, "refused", "body")
	if replayed || first.Status != http.StatusBadRequest || string(first.Body) != string(errs.PermissionDenied) {
		t.Fatalf("first: status %d, replayed %v: %s", first.Status, replayed, first.Body)
	}
	if stored := k.stored("refused"); !bytes.Equal(stored, first.Body) {
		t.Errorf("stored %s, want %s", stored, first.Body)
	}
	again, replayed := k.create(funding.Caller{Scope: scope, OnDemand: true}, funding.OnDemand, in, "refused", "body")
	if !replayed || !bytes.Equal(again.Body, first.Body) {
		t.Errorf("again: replayed %v: %s, want %s replayed", replayed, again.Body, first.Body)
	}
	req := idempotency.Request{Scope: scope, Key: "refused", Hash: []byte("another body"), Now: f.Clock.Now()}
	_, _, err := f.Funding.CreateKeyed(ctx, funding.Caller{Scope: scope}, funding.ForMicroDeposits, in, req, k.answer)
	wantCode(t, err, errs.IdempotencyKeyReused)
	if n := k.sources(); n != 0 {
		t.Errorf("%d sources, want none", n)
	}
}

// TestCreateKeyedReplacesAnExpiredResponse: a key whose stored response
// expired takes a new request, which the one-statement write leaves to the
// general path; its answer replaces the old one.
func TestCreateKeyedReplacesAnExpiredResponse(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	k := &keyed{t: t, f: f, scope: scope}
	cus := f.Customer(scope)
	old, _ := k.create(funding.Caller{Scope: scope}, funding.ForMicroDeposits, input(cus, "64646464"), "reused", "old")
	f.Clock.Advance(idempotency.TTL + 1)
	k.answers = 0
	fresh, replayed := k.create(funding.Caller{Scope: scope}, funding.ForMicroDeposits, input(cus, "65656565"), "reused", "new")
	if replayed || fresh.Status != http.StatusOK || bytes.Equal(fresh.Body, old.Body) {
		t.Fatalf("after expiry: status %d, replayed %v: %s", fresh.Status, replayed, fresh.Body)
	}
	if k.answers != 2 {
		t.Errorf("%d answers rendered, want 2 (the statement's, then the general path's)", k.answers)
	}
	if stored := k.stored("reused"); !bytes.Equal(stored, fresh.Body) {
		t.Errorf("stored %s, want %s", stored, fresh.Body)
	}
	if n := k.sources(); n != 2 {
		t.Errorf("%d sources, want 2", n)
	}
}

// TestIdempotentRefusesInsideATransaction: an idempotent request commits
// on its own, so a transaction's store does not run one.
func TestIdempotentRefusesInsideATransaction(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	ran := false
	err := f.DB.Funding().WithTx(ctx, func(tx funding.Store) error {
		_, err := tx.Idempotent(ctx, idempotency.Request{Scope: scope, Key: "k", Hash: []byte("h"), Now: f.Clock.Now()},
			func(funding.Store) (idempotency.Response, bool) {
				ran = true
				return idempotency.Response{Status: http.StatusOK}, true
			})
		return err
	})
	if err == nil || ran {
		t.Errorf("Idempotent in a transaction: err %v, fn ran %v; want a refusal and fn not run", err, ran)
	}
}
