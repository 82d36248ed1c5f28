package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

// TestTheSourceRuleAtItsEdges: the source's rule for a new payment
// (sourceRefusal, which the creating statements decide by and
// PaymentSource reports) over every combination of its facts: a removed
// source takes nothing, a debit needs a Verified source that no return
// blocked (the Unverified refusal first), a credit goes to any live one.
func TestTheSourceRuleAtItsEdges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.DB(t)
	execAll(t, db.Pool(), append(merchantRows("mer_rule"),
		`INSERT INTO customers (merchant_id, environment, id, first_name, last_name, email) VALUES ('mer_rule', 'sandbox', 'cus_rule', 'A', 'B', 'a@example.com')`)...)
	scope := tenant.Scope{MerchantID: "mer_rule", Env: tenant.Sandbox}
	for i, c := range []struct {
		verified, removed, blocked bool
		debit, credit              string
	}{
		{true, false, false, "", ""},
		{false, false, false, payment.RefusedUnverified, ""},
		{true, false, true, payment.RefusedBlocked, ""},
		{false, false, true, payment.RefusedUnverified, ""},
		{true, true, false, payment.RefusedRemoved, payment.RefusedRemoved},
		{false, true, false, payment.RefusedRemoved, payment.RefusedRemoved},
		{true, true, true, payment.RefusedRemoved, payment.RefusedRemoved},
	} {
		id := fmt.Sprintf("fs_rule%d", i)
		status, removed, blockCode, blocked := "'Unverified'", "NULL", "NULL", "NULL"
		if c.verified {
			status = "'Verified'"
		}
		if c.removed {
			removed = "now()"
		}
		if c.blocked {
			blockCode, blocked = "'R10'", "now()"
		}
		execAll(t, db.Pool(), `INSERT INTO funding_sources (merchant_id, environment, id, customer_id, status, routing_number, last_four,
		    account_type, account_key_id, account_ciphertext, fingerprint, created_at, removed_at, block_code, blocked_at)
		  VALUES ('mer_rule', 'sandbox', '`+id+`', 'cus_rule', `+status+`, '110000000', '1234', 'checking', 'k', '\x00', '\x0`+fmt.Sprint(i)+`',
		    now(), `+removed+`, `+blockCode+`, `+blocked+`)`)
		src, err := db.Payments().PaymentSource(ctx, scope, id)
		if err != nil {
			t.Fatal(err)
		}
		if src.DebitRefusal != c.debit || src.CreditRefusal != c.credit {
			t.Errorf("verified %t removed %t blocked %t: debit %q credit %q; want %q %q",
				c.verified, c.removed, c.blocked, src.DebitRefusal, src.CreditRefusal, c.debit, c.credit)
		}
		if src.Verified != c.verified || src.Removed != c.removed || src.Blocked != c.blocked || src.CustomerID != "cus_rule" {
			t.Errorf("%s read as %+v", id, src)
		}
	}
}

// TestTheLimitsRuleAtItsEdges: the originator's limits rule
// (originatorRefusal, which the creating statements decide by under the
// originator's lock and OriginatorTerms reports) for one debit, at each
// limit's edge: a debit of exactly per_entry_debit and one that brings
// the day exactly to daily_debit are taken, a cent more is refused; an
// older day's usage does not count; an originator that is not active
// refuses first.
func TestTheLimitsRuleAtItsEdges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.DB(t)
	execAll(t, db.Pool(), merchantRows("mer_lim")...)
	scope := tenant.Scope{MerchantID: "mer_lim", Env: tenant.Sandbox}
	for _, c := range []struct {
		status, usageDay string
		used, cents      int64
		want             string
	}{
		{"active", "2026-12-01", 50_00, 50_00, ""}, // the day reaches exactly 100.00
		{"active", "2026-12-01", 0, 50_01, payment.LimitPerEntryDebit},
		{"active", "2026-12-01", 60_00, 40_00, ""},
		{"active", "2026-12-01", 60_00, 40_01, payment.LimitDailyDebit},
		{"active", "2026-11-30", 99_00, 50_00, ""}, // yesterday's usage
		{"suspended", "2026-12-01", 0, 1, payment.RefusedNotActive},
		{"pending_review", "2026-12-01", 0, 50_01, payment.RefusedNotActive},
	} {
		execAll(t, db.Pool(), fmt.Sprintf(`UPDATE originators SET status = '%s', per_entry_debit_cents = 5000,
		    daily_debit_cents = 10000, daily_credit_cents = 10000, usage_day = '%s', usage_debit_cents = %d
		  WHERE merchant_id = 'mer_lim' AND environment = 'sandbox'`, c.status, c.usageDay, c.used))
		terms, err := db.Payments().OriginatorTerms(ctx, scope, "2026-12-01", c.cents)
		if err != nil {
			t.Fatal(err)
		}
		if terms.Refusal != c.want {
			t.Errorf("%s, %d used on %s, debit of %d: refusal %q, want %q", c.status, c.used, c.usageDay, c.cents, terms.Refusal, c.want)
		}
	}
}

// TestTheMandateRuleAtItsEdges: the mandate rule (mandateRefusal, which
// createDebit decides by with the mandate locked and MandateForUse
// reports) over its facts: a mandate authorizes only its own source, only
// while active (another source's refusal first), a subscription only when
// recurring, and a single one only one debit; a recurring one any number.
func TestTheMandateRuleAtItsEdges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.DB(t)
	execAll(t, db.Pool(), append(merchantRows("mer_man"),
		`INSERT INTO customers (merchant_id, environment, id, first_name, last_name, email) VALUES ('mer_man', 'sandbox', 'cus_man', 'A', 'B', 'a@example.com')`,
		`INSERT INTO funding_sources (merchant_id, environment, id, customer_id, status, routing_number, last_four,
		    account_type, account_key_id, account_ciphertext, fingerprint, created_at)
		  VALUES ('mer_man', 'sandbox', 'fs_man', 'cus_man', 'Verified', '110000000', '1234', 'checking', 'k', '\x00', '\x01', now()),
		         ('mer_man', 'sandbox', 'fs_other', 'cus_man', 'Verified', '110000000', '5678', 'checking', 'k', '\x00', '\x02', now())`)...)
	for _, m := range []struct{ id, typ, status, used string }{
		{"man_single", "single", "active", "NULL"},
		{"man_spent", "single", "active", "now()"},
		{"man_recurring", "recurring", "active", "NULL"},
		{"man_recurring_used", "recurring", "active", "now()"},
		{"man_revoked", "recurring", "revoked", "NULL"},
		{"man_revoked_spent", "single", "revoked", "now()"},
	} {
		revoked := "NULL"
		if m.status == "revoked" {
			revoked = "now()"
		}
		execAll(t, db.Pool(), `INSERT INTO mandates (merchant_id, environment, id, funding_source_id, customer_id, type, sec_code, status,
		    accepted_at, text, text_sha256, revoked_at, created_at, used_at)
		  VALUES ('mer_man', 'sandbox', '`+m.id+`', 'fs_man', 'cus_man', '`+m.typ+`', 'WEB', '`+m.status+`',
		    now(), 'I authorize.', repeat('0', 64), `+revoked+`, now(), `+m.used+`)`)
	}
	scope := tenant.Scope{MerchantID: "mer_man", Env: tenant.Sandbox}
	for _, c := range []struct {
		mandate, source string
		typ             payment.MandateType
		want            string
	}{
		{"man_single", "fs_man", payment.Single, ""},
		{"man_single", "fs_man", payment.Recurring, payment.RefusedMandateNotRecurring},
		{"man_spent", "fs_man", payment.Single, payment.RefusedMandateUsed},
		{"man_spent", "fs_man", payment.Recurring, payment.RefusedMandateNotRecurring},
		{"man_recurring", "fs_man", payment.Single, ""},
		{"man_recurring", "fs_man", payment.Recurring, ""},
		{"man_recurring_used", "fs_man", payment.Single, ""},
		{"man_recurring_used", "fs_man", payment.Recurring, ""},
		{"man_revoked", "fs_man", payment.Recurring, payment.RefusedMandateRevoked},
		{"man_revoked_spent", "fs_man", payment.Single, payment.RefusedMandateRevoked},
		{"man_single", "fs_other", payment.Single, payment.RefusedMandateOtherSource},
		{"man_revoked", "fs_other", payment.Recurring, payment.RefusedMandateOtherSource},
	} {
		got, err := db.Payments().MandateForUse(ctx, scope, c.mandate, c.source, c.typ)
		if err != nil || got != c.want {
			t.Errorf("%s for a %s of %s: %q, %v; want %q", c.mandate, c.typ, c.source, got, err, c.want)
		}
	}
	if _, err := db.Payments().MandateForUse(ctx, scope, "man_unknown", "fs_man", payment.Single); !errs.Is(err, errs.NotFound) {
		t.Errorf("an unknown mandate: %v, want not_found", err)
	}
}
