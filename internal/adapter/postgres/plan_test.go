package postgres_test

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
)

// TestOneRowReadsUseTheIDIndexWithoutStatistics: on tables that were
// never analyzed (autovacuum off, 40,000 sources, account numbers,
// payments and stored responses bulk-written into 64 customers), the hot
// one-row reads go through the table's unique id index, for a one-off plan
// and for the generic plan a prepared statement ends up with; and the
// batch of creations reads each row's customer, stored response and
// account-number holder through their unique indexes, and its account's
// history through the account's index.
func TestOneRowReadsUseTheIDIndexWithoutStatistics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := poolConn(t)
	execAll(t, conn, append(merchantRows("mer_a", "mer_b"),
		`ALTER TABLE customers SET (autovacuum_enabled = false)`,
		`ALTER TABLE funding_sources SET (autovacuum_enabled = false)`,
		`ALTER TABLE payments SET (autovacuum_enabled = false)`,
		`ALTER TABLE idempotency_keys SET (autovacuum_enabled = false)`,
		`ALTER TABLE account_numbers SET (autovacuum_enabled = false)`,
		`INSERT INTO customers (merchant_id, environment, id, first_name, last_name, email)
		 SELECT 'mer_a', 'sandbox', 'cus_' || i, 'A', 'B', 'a@example.com' FROM generate_series(1, 64) i`,
		`INSERT INTO funding_sources (merchant_id, environment, id, customer_id, status, routing_number, last_four, account_type,
		   account_key_id, account_ciphertext, fingerprint, created_at)
		 SELECT 'mer_a', 'sandbox', 'fs_' || i, 'cus_' || (i % 64 + 1), 'Unverified', '110000000', '1234', 'checking',
		   'k', '\x00', convert_to(i::text, 'UTF8'), now()
		 FROM generate_series(1, 40000) i`,
		`INSERT INTO account_numbers (environment, fingerprint, merchant_id, funding_source_id, customer_id, created_at)
		 SELECT 'sandbox', convert_to(i::text, 'UTF8'), 'mer_a', 'fs_' || i, 'cus_' || (i % 64 + 1), now()
		 FROM generate_series(1, 40000) i`,
		`INSERT INTO payments (merchant_id, environment, id, funding_source_id, customer_id, direction, amount_cents, status, created_at)
		 SELECT 'mer_a', 'sandbox', 'pay_' || i, 'fs_' || i, 'cus_' || (i % 64 + 1), 'credit', 100, 'pending', now()
		 FROM generate_series(1, 40000) i`,
		`INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, response_status, response_body, created_at)
		 SELECT 'mer_a', 'sandbox', 'key-' || i, '\x00', 200, '\x00', now() FROM generate_series(1, 40000) i`,
	)...)
	var analyzed int
	if err := conn.GetContext(ctx, &analyzed, `SELECT count(*) FROM pg_class
		WHERE relname IN ('customers', 'funding_sources', 'payments', 'idempotency_keys', 'account_numbers') AND reltuples >= 0`); err != nil || analyzed != 0 {
		t.Fatalf("the tables have statistics (%d, %v): the test would prove nothing", analyzed, err)
	}

	for _, c := range []struct {
		table, query, id string
	}{
		{"funding_sources", postgres.SelectSource, "fs_777"},
		{"funding_sources", postgres.SourceAnswer, "fs_777"},
		{"customers", postgres.SelectCustomer, "cus_7"},
		{"payments", postgres.SelectPayment, "pay_777"},
	} {
		custom := explainJSON(t, conn, c.query, "mer_a", "sandbox", c.id)
		if got := scanOf(t, custom, c.table); got != c.table+"_id" {
			t.Errorf("%s, one-off plan: read through %q, want %s_id\n%s", c.table, got, c.table, custom)
		}
		if _, err := conn.ExecContext(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, `PREPARE lookup (text, text, text) AS `+c.query); err != nil {
			t.Fatal(err)
		}
		var generic []byte
		if err := conn.GetContext(ctx, &generic, `EXPLAIN (FORMAT JSON) EXECUTE lookup ('mer_a', 'sandbox', '`+c.id+`')`); err != nil {
			t.Fatal(err)
		}
		if got := scanOf(t, generic, c.table); got != c.table+"_id" {
			t.Errorf("%s, generic plan: read through %q, want %s_id\n%s", c.table, got, c.table, generic)
		}
		if _, err := conn.ExecContext(ctx, `DEALLOCATE lookup; RESET plan_cache_mode`); err != nil {
			t.Fatal(err)
		}
	}

	// The account check reads its account's history by index, in a plan
	// for its values and in the generic one.
	custom := explainJSON(t, conn, postgres.SelectAccountFacts, "sandbox", []byte{0xaa}, "mer_a", "fs_777")
	if _, err := conn.ExecContext(ctx, `SET plan_cache_mode = force_generic_plan; PREPARE facts (text, bytea, text, text) AS `+postgres.SelectAccountFacts); err != nil {
		t.Fatal(err)
	}
	var generic []byte
	if err := conn.GetContext(ctx, &generic, `EXPLAIN (FORMAT JSON) EXECUTE facts ('sandbox', '\xaa', 'mer_a', 'fs_777')`); err != nil {
		t.Fatal(err)
	}
	for _, plan := range [][]byte{custom, generic} {
		if got := scanOf(t, plan, "account_facts"); got != "account_facts_of_account" {
			t.Errorf("the account check reads account_facts through %q, want account_facts_of_account\n%s", got, plan)
		}
	}
	if _, err := conn.ExecContext(ctx, `DEALLOCATE facts; RESET plan_cache_mode`); err != nil {
		t.Fatal(err)
	}

	// The batch of creations reads each row's stored response, customer and
	// account-number holder through their unique keys, and its account's
	// history through the account's index, whatever the number of rows it
	// is given: its writers run its generic plan.
	if _, err := conn.ExecContext(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	wantBatchReadsByKey(t, conn, "")

	// The tenancy filter still holds: another merchant's key finds nothing.
	var n int
	if err := conn.GetContext(ctx, &n, `SELECT count(*) FROM (`+postgres.SelectSource+`) s`, "mer_b", "sandbox", "fs_777"); err != nil || n != 0 {
		t.Errorf("another merchant read fs_777: %d rows, %v", n, err)
	}
	if err := conn.GetContext(ctx, &n, `SELECT count(*) FROM (`+postgres.SelectSource+`) s`, "mer_a", "production", "fs_777"); err != nil || n != 0 {
		t.Errorf("production read a sandbox source: %d rows, %v", n, err)
	}
}

// readsOf returns, for every node of an EXPLAIN (FORMAT JSON) plan that
// reads table (not one that writes it), the index it reads through, or its
// node type when it reads without an index.
func readsOf(t *testing.T, plan []byte, table string) []string {
	t.Helper()
	var reads []string
	walkPlan(t, plan, func(n node) {
		if n.Relation != table || n.Type == "ModifyTable" {
			return
		}
		reads = append(reads, cmp.Or(n.Index, n.Type))
	})
	return reads
}

// scanOf returns the index through which an EXPLAIN (FORMAT JSON) plan
// reads table, or the node type when it reads it without an index.
func scanOf(t *testing.T, plan []byte, table string) string {
	t.Helper()
	var found string
	walkPlan(t, plan, func(n node) {
		if n.Relation == table && found == "" {
			found = cmp.Or(n.Index, n.Type)
		}
	})
	return found
}

// walkPlan calls visit on every node of an EXPLAIN (FORMAT JSON) plan,
// parents first.
func walkPlan(t *testing.T, plan []byte, visit func(n node)) {
	t.Helper()
	var doc []struct {
		Plan node `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &doc); err != nil || len(doc) != 1 {
		t.Fatalf("plan: %v\n%s", err, plan)
	}
	var walk func(n node)
	walk = func(n node) {
		visit(n)
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(doc[0].Plan)
}

type node struct {
	Type     string `json:"Node Type"`
	Relation string `json:"Relation Name"`
	Index    string `json:"Index Name"`
	Plans    []node `json:"Plans"`
}

// TestTheCreationBatchReadsByIndexFromAnEmptyStart: a batch writer plans
// the creation statement once per connection, and a server's first
// connections do it on the tables as they are at its start, empty in a new
// deployment, where a sequential scan looks free. That plan then serves
// the connection's life while the tables grow, until an analyze replaces
// it, and a scan of the stored responses or the account numbers in every
// batch makes creation slower with every row written. In the batch
// writers' session the plan made on empty tables reads every table
// through its index.
func TestTheCreationBatchReadsByIndexFromAnEmptyStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := poolConn(t)
	var rows int
	if err := conn.GetContext(ctx, &rows, `SELECT (SELECT count(*) FROM idempotency_keys) + (SELECT count(*) FROM account_numbers)
		+ (SELECT count(*) FROM customers) + (SELECT count(*) FROM account_facts)`); err != nil || rows != 0 {
		t.Fatalf("the tables hold %d rows (%v): the test would prove nothing", rows, err)
	}
	for _, set := range postgres.BatchSession {
		if _, err := conn.ExecContext(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	wantBatchReadsByKey(t, conn, "on empty tables ")
}

// wantBatchReadsByKey prepares the creation statement on conn, in its
// session as set, and checks that its plan reads each row's stored
// response, customer and account-number holder through their unique keys
// and its account's history through the account's index, once each; when
// is the start of each error.
func wantBatchReadsByKey(t *testing.T, conn *sqlx.Conn, when string) {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, `PREPARE batch AS `+postgres.CreateSources); err != nil {
		t.Fatal(err)
	}
	var batch []byte
	if err := conn.GetContext(ctx, &batch, `EXPLAIN (FORMAT JSON) EXECUTE batch (`+
		strings.TrimSuffix(strings.Repeat(`'{}', `, 34), ", ")+`)`); err != nil {
		t.Fatal(err)
	}
	for table, index := range map[string]string{"customers": "customers_id", "idempotency_keys": "idempotency_keys_pkey",
		"account_numbers": "account_numbers_pkey", "account_facts": "account_facts_of_account"} {
		if got := readsOf(t, batch, table); len(got) != 1 || got[0] != index {
			t.Errorf("%sthe batch reads %s through %q, want %s once\n%s", when, table, got, index, batch)
		}
	}
}
