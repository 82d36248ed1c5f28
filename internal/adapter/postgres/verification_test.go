package postgres_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

// TestSourceRowCarriesItsCurrentVerification: whatever writes
// micro_deposits (here plain SQL), the source's md_* columns follow its
// latest verification in the same transaction, and a change to an older
// one never overwrites them.
func TestSourceRowCarriesItsCurrentVerification(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.DB(t).Pool()
	execAll(t, db, append(merchantRows("mer_v"),
		`INSERT INTO customers (merchant_id, environment, id, first_name, last_name, email) VALUES ('mer_v', 'sandbox', 'cus_v', 'A', 'B', 'a@example.com')`,
		`INSERT INTO funding_sources (merchant_id, environment, id, customer_id, status, routing_number, last_four, account_type,
		   account_key_id, account_ciphertext, fingerprint, created_at)
		 VALUES ('mer_v', 'sandbox', 'fs_v', 'cus_v', 'Unverified', '110000000', '1234', 'checking', 'k', '\x00', '\x01', now())`,
	)...)
	type current struct {
		Seq      *int    `db:"md_seq"`
		Status   *string `db:"md_status"`
		Attempts *int    `db:"md_attempts_remaining"`
		Code     *string `db:"md_return_code"`
	}
	read := func() current {
		t.Helper()
		var c current
		if err := db.GetContext(ctx, &c, `SELECT md_seq, md_status, md_attempts_remaining, md_return_code FROM funding_sources WHERE id = 'fs_v'`); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := read(); c.Seq != nil || c.Status != nil {
		t.Fatalf("a source without micro-deposits: %+v", c)
	}
	deposit := func(seq int) string {
		return `INSERT INTO micro_deposits (merchant_id, environment, funding_source_id, seq, amounts_key_id, amounts_ciphertext, status,
			initiated_at, expected_arrival_date, expires_at, attempts_remaining)
			VALUES ('mer_v', 'sandbox', 'fs_v', ` + strconv.Itoa(seq) + `, 'k', '\x00', 'pending', now(), current_date, now() + interval '10 days', 3)`
	}
	steps := []struct {
		sql          string
		seq          int
		status, code string
		attempts     int
	}{
		{deposit(1), 1, "pending", "", 3},
		{`UPDATE micro_deposits SET attempts_remaining = 2 WHERE seq = 1`, 1, "pending", "", 2},
		{`UPDATE micro_deposits SET status = 'failed', return_code = 'R03', attempts_remaining = 0 WHERE seq = 1`, 1, "failed", "R03", 0},
		{deposit(2), 2, "pending", "", 3},
		{`UPDATE micro_deposits SET finished_at = now() WHERE seq = 1`, 2, "pending", "", 3}, // an older one changes nothing
		{`UPDATE micro_deposits SET status = 'expired' WHERE seq = 2`, 2, "expired", "", 3},
	}
	for _, st := range steps {
		if _, err := db.ExecContext(ctx, st.sql); err != nil {
			t.Fatalf("%s: %v", st.sql, err)
		}
		c := read()
		code := ""
		if c.Code != nil {
			code = *c.Code
		}
		if c.Seq == nil || *c.Seq != st.seq || c.Status == nil || *c.Status != st.status || code != st.code || c.Attempts == nil || *c.Attempts != st.attempts {
			t.Errorf("after %q: seq %v status %v code %q attempts %v; want %d %s %q %d", st.sql, c.Seq, c.Status, code, c.Attempts,
				st.seq, st.status, st.code, st.attempts)
		}
	}
}
