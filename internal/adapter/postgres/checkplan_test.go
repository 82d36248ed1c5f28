package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
)

// TestASourceWithAKeptCheckReadsNoHistory: a list of sources executes
// the account history's index scan only for a source that keeps no check
// or whose kept check has expired; with a kept check the scan is never
// executed, however long the account's history. A source read alone never
// touches the history (the service reads it when it must).
func TestASourceWithAKeptCheckReadsNoHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := poolConn(t)
	execAll(t, conn, append(merchantRows("mer_a"),
		`INSERT INTO customers (merchant_id, environment, id, first_name, last_name, email)
		 VALUES ('mer_a', 'sandbox', 'cus_1', 'A', 'B', 'a@example.com')`,
		`INSERT INTO funding_sources (merchant_id, environment, id, customer_id, status, routing_number, last_four, account_type,
		   account_key_id, account_ciphertext, fingerprint, created_at, account_fp)
		 VALUES ('mer_a', 'sandbox', 'fs_1', 'cus_1', 'Unverified', '110000000', '1234', 'checking', 'k', '\x00', '\x01', now(), '\xaa')`,
		`INSERT INTO account_facts (environment, account_fp, kind, merchant_id, customer_id, funding_source_id, at)
		 SELECT 'sandbox', '\xaa', 'paid', 'mer_b', 'cus_' || i, 'fs_b' || i, now() FROM generate_series(1, 200) i`,
	)...)
	for _, c := range []struct {
		name, set string
		read      bool
	}{
		{"marked (no kept check)", `check_result = NULL`, true},
		{"kept", `check_result = 'caution', check_reasons = '{many_customers}', check_expires_at = NULL`, false},
		{"kept until later", `check_expires_at = now() + interval '1 day'`, false},
		{"expired", `check_expires_at = now() - interval '1 second'`, true},
	} {
		execAll(t, conn, `UPDATE funding_sources SET `+c.set+` WHERE id = 'fs_1'`)
		var lines []string
		if err := conn.SelectContext(ctx, &lines, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) `+postgres.ListSources,
			"mer_a", "sandbox", "infinity", "", 11, "cus_1", true); err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		var scan string
		for _, l := range lines {
			if strings.Contains(l, "account_facts") {
				scan = l
				break
			}
		}
		if scan == "" {
			t.Fatalf("%s: no scan of account_facts in\n%s", c.name, plan)
		}
		if read := !strings.Contains(scan, "never executed"); read != c.read {
			t.Errorf("%s: history read %v, want %v:\n%s", c.name, read, c.read, plan)
		}
		var alone []string
		if err := conn.SelectContext(ctx, &alone, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) `+postgres.SelectSource, "mer_a", "sandbox", "fs_1"); err != nil {
			t.Fatal(err)
		}
		if plan := strings.Join(alone, "\n"); strings.Contains(plan, "account_facts") {
			t.Errorf("%s: a source read alone scans account_facts:\n%s", c.name, plan)
		}
	}
}
