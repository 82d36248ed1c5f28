package postgres_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

// keyedCreation is one request of the batch tests: a creation under an
// Idempotency-Key, stored with its response as the server stores it.
type keyedCreation struct {
	key     string
	account string // the account number, whose fingerprint the source claims
	src     funding.Source
	// outcome, once run: the replayed response, the error, and whether
	// this request's own CreateSource created the source.
	replay  *idempotency.Response
	err     error
	created bool
}

func newKeyedCreation(scope tenant.Scope, customerID, id, key, account string, now time.Time) *keyedCreation {
	sum := sha256.Sum256([]byte(account))
	return &keyedCreation{key: key, account: account, src: funding.Source{Scope: scope, ID: id, CustomerID: customerID,
		Status: funding.Unverified, RoutingNumber: "021000021", LastFour: account[len(account)-4:], AccountType: "checking",
		CreatedAt: now, Account: funding.Sealed{KeyID: "k1", Data: []byte("sealed " + id)}, Fingerprint: sum[:]}}
}

// body is the response stored under the creation's key.
func (k *keyedCreation) body() []byte { return []byte(`{"funding_source_id":"` + k.src.ID + `"}`) }

// run creates the source as the server's creation handler does: in one
// keyed statement, or on the general idempotent path when that hands it
// back.
func (k *keyedCreation) run(db *postgres.DB) {
	ctx := context.Background()
	hash := sha256.Sum256([]byte(k.key + k.account))
	now := k.src.CreatedAt
	req := idempotency.Request{Scope: k.src.Scope, Key: k.key, Hash: hash[:], Now: now}
	answer := idempotency.Response{Status: 200, Body: k.body()}
	evs := []event.Event{event.New(k.src.Scope, event.FundingSourceCreated, map[string]string{"funding_source_id": k.src.ID}, now)}
	k.created, k.replay, k.err = db.CreateSourceKeyed(ctx, k.src, evs, req, answer)
	if k.created || k.replay != nil || k.err != nil {
		return
	}
	var failed error
	k.replay, k.err = db.Idempotent(ctx, req, func(tx postgres.Tx) (idempotency.Response, bool) {
		_, created, err := tx.CreateSource(ctx, k.src, evs)
		k.created = created
		switch {
		case err != nil:
			failed = err
			return idempotency.Response{Status: 500}, false
		case !created:
			return idempotency.Response{Status: 400, Body: []byte(`{"code":"account_taken"}`)}, true
		}
		return answer, true
	})
	if k.err == nil {
		k.err = failed
	}
}

// queueBehindHeldBatches starts every batch runner on a creation of its
// own and holds them (a transaction locks the customer row, which each
// source's foreign key must share), then queues reqs behind them and
// returns once all are queued, with the function that releases the lot
// and waits for every request to finish.
func queueBehindHeldBatches(t *testing.T, db *postgres.DB, scope tenant.Scope, customerID string, now time.Time,
	reqs []*keyedCreation) (release func()) {
	t.Helper()
	ctx := context.Background()
	hold, err := db.Pool().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.ExecContext(ctx, `SELECT 1 FROM customers WHERE id = $1 FOR UPDATE`, customerID); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	start := func(k *keyedCreation) {
		wg.Add(1)
		go func() { defer wg.Done(); k.run(db) }()
	}
	var first []*keyedCreation
	for i := range postgres.CreationBatches {
		k := newKeyedCreation(scope, customerID, fmt.Sprintf("fs_held%d", i), fmt.Sprintf("held-%d", i), fmt.Sprintf("90000000%d", i), now)
		first = append(first, k)
		start(k)
		waitForLockWait(t, db.Pool(), i+1) // each runner holds a batch of one
	}
	for _, k := range reqs {
		start(k)
	}
	deadline := time.Now().Add(10 * time.Second)
	for postgres.QueuedCreations(db) < len(reqs) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d creations queued", postgres.QueuedCreations(db), len(reqs))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return func() {
		if err := hold.Rollback(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		for _, k := range first {
			if k.err != nil || k.replay != nil || !k.created {
				t.Errorf("held creation %s: replay %v, err %v, created %v", k.key, k.replay, k.err, k.created)
			}
		}
	}
}

func batchTestScope(t *testing.T, db *postgres.DB, merchantID string) (tenant.Scope, string, time.Time) {
	t.Helper()
	scope := tenant.Scope{MerchantID: merchantID, Env: tenant.Sandbox}
	execAll(t, db.Pool(), merchantRows(merchantID)...)
	now := time.Now().UTC().Truncate(time.Microsecond)
	c := customer.Customer{Scope: scope, ID: "cus_" + merchantID, FirstName: "Ada", LastName: "Lovelace",
		Email: "ada@example.com", CreatedAt: now}
	if err := db.InsertCustomer(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return scope, c.ID, now
}

// Creations of concurrent requests share statements, and each keeps the
// guarantees of a creation on its own: 36 requests queued behind held
// batches are written in a few statements; among them, two requests with
// one key create one source (the other replays it, or is told the first is
// still in progress); two keys for one account number create one source
// (the other is refused, and its error answer is stored without any of its
// writes); a creation for another merchant's customer writes nothing.
// Every created source has its event and its stored response.
func TestCreationsOfConcurrentRequestsShareStatements(t *testing.T) {
	t.Parallel()
	db, trips := pgtest.CountingDB(t)
	scope, customerID, now := batchTestScope(t, db, "mer_batch")
	_, otherCustomer, _ := batchTestScope(t, db, "mer_batch_other")

	var reqs []*keyedCreation
	for i := range 30 {
		reqs = append(reqs, newKeyedCreation(scope, customerID, fmt.Sprintf("fs_b%02d", i), fmt.Sprintf("k-%02d", i), fmt.Sprintf("1000000%02d", i), now))
	}
	retry := newKeyedCreation(scope, customerID, "fs_retry", "k-03", "100000003", now) // k-03 again: a retry
	taken := newKeyedCreation(scope, customerID, "fs_taken", "k-taken", "100000007", now)
	foreign := newKeyedCreation(scope, otherCustomer, "fs_foreign", "k-foreign", "200000001", now)
	reqs = append(reqs, retry, taken, foreign)
	for i := range 3 {
		reqs = append(reqs, newKeyedCreation(scope, customerID, fmt.Sprintf("fs_c%d", i), fmt.Sprintf("k-c%d", i), fmt.Sprintf("3000000%02d", i), now))
	}
	release := queueBehindHeldBatches(t, db, scope, customerID, now, reqs)
	trips.Reset()
	release()

	batches := 0
	for _, l := range trips.Log() {
		if strings.HasPrefix(l, "sync: ") && strings.Contains(l, "unnest($1::text[]") {
			batches++
		}
	}
	// The queue fills as few statements as the batch size allows, plus
	// one statement each on the general path for the two rows refused by
	// a rule (another merchant's customer, a number taken in the batch).
	if want := (len(reqs)+postgres.CreationBatchMax-1)/postgres.CreationBatchMax + 2; batches == 0 || batches > want {
		t.Errorf("%d queued creations were written in %d creation statements, want 1 to %d", len(reqs), batches, want)
	}

	for _, k := range reqs {
		switch k {
		case retry, reqs[3]:
			// Two requests with one key (checked below).
		case taken, reqs[7]:
			// One account number, two keys: one is created, the other
			// refused (checked below).
			if k.err != nil || k.replay != nil {
				t.Errorf("%s, one of two keys for an account number: replay %v, err %v", k.key, k.replay, k.err)
			}
		case foreign:
			if k.created || !errors.Is(k.err, funding.ErrNoCustomer) {
				t.Errorf("another merchant's customer: created %v, err %v", k.created, k.err)
			}
		default:
			if !k.created || k.err != nil || k.replay != nil {
				t.Errorf("%s: created %v, replay %v, err %v", k.key, k.created, k.replay, k.err)
			}
		}
	}

	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.Pool().Get(&n, q, args...); err != nil {
			t.Fatal(err)
		}
		return n
	}
	created := len(reqs) - 3 + postgres.CreationBatches
	if n := count(`SELECT count(*) FROM funding_sources`); n != created {
		t.Errorf("%d sources, want %d", n, created)
	}
	if n := count(`SELECT count(*) FROM funding_sources f JOIN events e ON e.data->>'funding_source_id' = f.id`); n != created {
		t.Errorf("%d sources with their event, want %d", n, created)
	}
	if n := count(`SELECT count(*) FROM events`); n != created {
		t.Errorf("%d events, want %d", n, created)
	}
	if n := count(`SELECT count(*) FROM account_numbers a JOIN funding_sources f ON f.id = a.funding_source_id`); n != created {
		t.Errorf("%d account numbers held by their source, want %d", n, created)
	}
	// Of two requests with one key, one creates the source; the other
	// replays it, or ran while the first held the key.
	winner, loser := reqs[3], retry
	if retry.created {
		winner, loser = retry, reqs[3]
	}
	if !winner.created || winner.err != nil || winner.replay != nil || loser.created ||
		(loser.err == nil && (loser.replay == nil || !bytes.Equal(loser.replay.Body, winner.body()))) ||
		(loser.err != nil && errs.CodeOf(loser.err) != errs.RequestInProgress) {
		t.Errorf("two requests with one key: created %v and %v, replays %v and %v, errors %v and %v",
			reqs[3].created, retry.created, reqs[3].replay, retry.replay, reqs[3].err, retry.err)
	}
	if taken.created == reqs[7].created {
		t.Errorf("two keys for one account number: created %v and %v, want exactly one", taken.created, reqs[7].created)
	}
	for _, k := range reqs {
		var body []byte
		err := db.Pool().Get(&body, `SELECT response_body FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`, scope.MerchantID, k.key)
		switch {
		case k == foreign:
			if err == nil {
				t.Errorf("the refused creation for another merchant's customer stored %s", body)
			}
			continue
		case err != nil:
			t.Errorf("%s: no stored response: %v", k.key, err)
			continue
		}
		switch {
		case k == retry || k == reqs[3]:
			if !bytes.Equal(body, winner.body()) {
				t.Errorf("k-03's stored response is %s, want %s", body, winner.body())
			}
		case !k.created && (k == taken || k == reqs[7]):
			if string(body) != `{"code":"account_taken"}` {
				t.Errorf("the refused creation stored %s", body)
			}
		default:
			if !bytes.Equal(body, k.body()) {
				t.Errorf("%s stored %s, want %s", k.key, body, k.body())
			}
		}
	}
	if n := count(`SELECT count(*) FROM funding_sources WHERE id IN ($1, 'fs_foreign')`, loser.src.ID); n != 0 {
		t.Errorf("%d sources of refused requests were written", n)
	}
}

// A batch that fails as a whole writes nothing, and each of its requests
// then runs on its own: a creation that breaks a constraint (a last four
// that is not four digits) fails alone, and the others in its batch are
// created.
func TestAFailedBatchFallsBackToOneCreationEach(t *testing.T) {
	t.Parallel()
	db, trips := pgtest.CountingDB(t)
	scope, customerID, now := batchTestScope(t, db, "mer_batchfail")
	var reqs []*keyedCreation
	for i := range 6 {
		reqs = append(reqs, newKeyedCreation(scope, customerID, fmt.Sprintf("fs_f%d", i), fmt.Sprintf("f-%d", i), fmt.Sprintf("4000000%02d", i), now))
	}
	bad := reqs[2]
	bad.src.LastFour = "12ab"
	release := queueBehindHeldBatches(t, db, scope, customerID, now, reqs)
	trips.Reset()
	release()

	failedBatch := false
	for _, l := range trips.Log() {
		failedBatch = failedBatch || strings.Contains(l, "unnest($1::text[]")
	}
	if !failedBatch {
		t.Error("the queued creations were never tried in a batch")
	}
	for _, k := range reqs {
		if k == bad {
			if k.created || k.err == nil {
				t.Errorf("the creation that breaks a constraint: created %v, err %v", k.created, k.err)
			}
			continue
		}
		if !k.created || k.err != nil {
			t.Errorf("%s, in the failed batch: created %v, err %v", k.key, k.created, k.err)
		}
	}
	var n int
	if err := db.Pool().Get(&n, `SELECT count(*) FROM funding_sources WHERE id LIKE 'fs_f%'`); err != nil || n != len(reqs)-1 {
		t.Errorf("%d of the batch's sources written (%v), want %d", n, err, len(reqs)-1)
	}
}

// TestCreationWritesTheIndividualIDItself: the creation statement writes
// the default Individual Identification Number itself, so it needs no
// trigger (disabled here: without it a row lacking the number breaks the
// column's NOT NULL); a row inserted without one, as an older server's,
// gets the same number from the trigger.
func TestCreationWritesTheIndividualIDItself(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	scope, customerID, now := batchTestScope(t, db, "mer_iin")
	execAll(t, db.Pool(), `ALTER TABLE funding_sources DISABLE TRIGGER funding_sources_receiver_defaults`)
	k := newKeyedCreation(scope, customerID, "fs_abcdefghijklmnopqrstuvwxyz", "k-iin", "123456789", now)
	k.src.AccountHolderType = funding.HolderIndividual // as the funding service always sets it
	k.run(db)
	if !k.created || k.err != nil {
		t.Fatalf("created %v, err %v", k.created, k.err)
	}
	execAll(t, db.Pool(), `ALTER TABLE funding_sources ENABLE TRIGGER funding_sources_receiver_defaults`,
		`INSERT INTO funding_sources (merchant_id, environment, id, customer_id, status, routing_number, last_four, account_type,
		   account_key_id, account_ciphertext, fingerprint, created_at, account_holder_type)
		 VALUES ('mer_iin', 'sandbox', 'fs_zyxwvutsrqponmlkjihgfedcba', '`+customerID+`', 'Unverified', '021000021', '1234', 'checking',
		   'k1', '\x00', '\x01', now(), 'individual')`)
	for id, want := range map[string]string{"fs_abcdefghijklmnopqrstuvwxyz": "LMNOPQRSTUVWXYZ", "fs_zyxwvutsrqponmlkjihgfedcba": "ONMLKJIHGFEDCBA"} {
		var got string
		if err := db.Pool().Get(&got, `SELECT individual_id FROM funding_sources WHERE id = $1`, id); err != nil || got != want {
			t.Errorf("%s: individual id %q, %v; want %q", id, got, err, want)
		}
	}
}
