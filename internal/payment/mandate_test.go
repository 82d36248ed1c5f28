package payment_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

func ptr[T any](v T) *T { return &v }

func consent() *payment.Authorization {
	return &payment.Authorization{AcceptedAt: ptr("2026-11-01T15:04:05Z"), IPAddress: ptr("203.0.113.7"),
		UserAgent: ptr("Mozilla/5.0"), Text: ptr("I authorize Acme to debit my account.")}
}

func debit(src string) payment.Input {
	return payment.Input{SourceID: src, Amount: json.RawMessage(`"12.34"`), Direction: payment.Debit}
}

// production returns a merchant's production scope, activated.
func production(t *testing.T, f *fixture.Fixture) tenant.Scope {
	t.Helper()
	m := f.Merchant("Acme")
	if _, err := f.ActivateProduction(ctx, m.Merchant.ID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	return tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
}

// mandateOf reads the mandate a payment or subscription went out under.
func mandateOf(t *testing.T, f *fixture.Fixture, scope tenant.Scope, id *string) payment.Mandate {
	t.Helper()
	if id == nil {
		t.Fatal("no mandate_id")
	}
	m, err := f.Payments.GetMandate(ctx, scope, *id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestProductionDebitsNeedAnAuthorization(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	live := production(t, f)
	src := f.VerifiedSource(live, f.Customer(live), "444455556666").ID

	_, err := f.Payments.Create(ctx, live, debit(src))
	if e, ok := errs.As(err); !ok || e.Code != errs.AuthorizationRequired || e.Param != "authorization" {
		t.Fatalf("debit without authorization: %v, want authorization_required", err)
	}
	_, err = f.Payments.Subscribe(ctx, live, payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"9.99"`),
		Interval: payment.Weekly, StartDate: "2026-11-09"})
	if !errs.Is(err, errs.AuthorizationRequired) {
		t.Fatalf("subscription without authorization: %v, want authorization_required", err)
	}
	// Credits need none.
	if _, err := f.Payments.Create(ctx, live, pay(src, payment.Credit)); err != nil {
		t.Fatalf("credit: %v", err)
	}
	in := debit(src)
	in.Authorization = consent()
	p, err := f.Payments.Create(ctx, live, in)
	if err != nil {
		t.Fatal(err)
	}
	m := mandateOf(t, f, live, p.MandateID)
	sum := sha256.Sum256([]byte(*in.Authorization.Text))
	if m.Type != payment.Single || m.SECCode != "WEB" || m.Status != payment.MandateActive || m.SourceID != src ||
		m.CustomerID != p.CustomerID || m.TextSHA256 != hex.EncodeToString(sum[:]) || m.Text != *in.Authorization.Text ||
		m.IPAddress == nil || *m.IPAddress != "203.0.113.7" || !m.AcceptedAt.Equal(time.Date(2026, 11, 1, 15, 4, 5, 0, time.UTC)) {
		t.Errorf("mandate = %+v", m)
	}
	// Nothing written for a refused debit: one mandate only.
	list, _, err := f.Payments.ListMandates(ctx, live, src, paging.Page{Limit: 10})
	if err != nil || len(list) != 1 {
		t.Errorf("mandates = %d, %v; want 1", len(list), err)
	}
}

func TestAuthorizationIsChecked(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	live := production(t, f)
	src := f.VerifiedSource(live, f.Customer(live), "444455556666").ID
	for _, c := range []struct {
		name  string
		edit  func(a *payment.Authorization)
		param string
	}{
		{"no text", func(a *payment.Authorization) { a.Text = nil }, "authorization.text"},
		{"blank text", func(a *payment.Authorization) { a.Text = ptr("  ") }, "authorization.text"},
		{"no accepted_at", func(a *payment.Authorization) { a.AcceptedAt = nil }, "authorization.accepted_at"},
		{"accepted_at not a time", func(a *payment.Authorization) { a.AcceptedAt = ptr("yesterday") }, "authorization.accepted_at"},
		{"accepted_at in the future", func(a *payment.Authorization) { a.AcceptedAt = ptr("2026-11-03T00:00:00Z") }, "authorization.accepted_at"},
		{"no ip in production", func(a *payment.Authorization) { a.IPAddress = nil }, "authorization.ip_address"},
		{"bad ip", func(a *payment.Authorization) { a.IPAddress = ptr("300.1.1.1") }, "authorization.ip_address"},
		{"control character in the user agent", func(a *payment.Authorization) { a.UserAgent = ptr("a\nb") }, "authorization.user_agent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := debit(src)
			in.Authorization = consent()
			c.edit(in.Authorization)
			_, err := f.Payments.Create(ctx, live, in)
			if e, ok := errs.As(err); !ok || e.Code != errs.InvalidRequest || e.Param != c.param {
				t.Errorf("got %v, want invalid_request on %s", err, c.param)
			}
		})
	}
}

func TestSandboxCreatesAMandateOfItsOwn(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	c, err := f.Customers.Create(ctx, scope, customer.Input{FirstName: "B", LastName: "Owner", Email: "b@example.com", BusinessName: ptr("Bakery LLC")})
	if err != nil {
		t.Fatal(err)
	}
	src := f.VerifiedSource(scope, c.ID, "444455556666").ID
	p, err := f.Payments.Create(ctx, scope, debit(src))
	if err != nil {
		t.Fatal(err)
	}
	m := mandateOf(t, f, scope, p.MandateID)
	if m.IPAddress != nil || m.UserAgent != nil || m.Text != payment.SandboxMandateText || m.SECCode != "CCD" || m.Type != payment.Single {
		t.Errorf("sandbox mandate = %+v", m)
	}
	sub, err := f.Payments.Subscribe(ctx, scope, payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"9.99"`),
		Interval: payment.Weekly, StartDate: "2026-11-09"})
	if err != nil {
		t.Fatal(err)
	}
	if m := mandateOf(t, f, scope, sub.MandateID); m.Type != payment.Recurring {
		t.Errorf("subscription's mandate type = %s, want recurring", m.Type)
	}
	// Its debits go out under it.
	d, err := f.Payments.Advance(ctx, scope, sub.ID)
	if err != nil || d.MandateID == nil || *d.MandateID != *sub.MandateID {
		t.Errorf("subscription debit's mandate = %v (%v), want %s", d.MandateID, err, *sub.MandateID)
	}
}

func TestAMandateAuthorizesOnlyWhatItCovers(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	live := production(t, f)
	user := f.Customer(live)
	src := f.VerifiedSource(live, user, "444455556666").ID
	other := f.VerifiedSource(live, user, "777788889999").ID
	in := debit(src)
	in.Authorization = consent()
	first, err := f.Payments.Create(ctx, live, in)
	if err != nil {
		t.Fatal(err)
	}
	single := *first.MandateID
	sub, err := f.Payments.Subscribe(ctx, live, payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"9.99"`),
		Interval: payment.Weekly, StartDate: "2026-11-09", Authorization: consent()})
	if err != nil {
		t.Fatal(err)
	}
	recurring := *sub.MandateID
	revoked, err := f.Payments.Subscribe(ctx, live, payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"5.00"`),
		Interval: payment.Monthly, StartDate: "2026-11-09", Authorization: consent()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Payments.Revoke(ctx, live, *revoked.MandateID, payment.RevokeInput{}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	sandbox := f.Sandbox("Other")
	for _, c := range []struct {
		name    string
		scope   tenant.Scope
		source  string
		mandate string
		sub     bool
		want    errs.Code
	}{
		{"a recurring mandate, for another debit", live, src, recurring, false, ""},
		{"a recurring mandate, for another subscription", live, src, recurring, true, ""},
		{"a single mandate used already", live, src, single, false, errs.InvalidRequest},
		{"a single mandate for a subscription", live, src, single, true, errs.InvalidRequest},
		{"another source's mandate", live, other, recurring, false, errs.InvalidRequest},
		{"another source's mandate, for a subscription", live, other, recurring, true, errs.InvalidRequest},
		{"a revoked mandate", live, src, *revoked.MandateID, false, errs.InvalidRequest},
		{"a revoked mandate, for a subscription", live, src, *revoked.MandateID, true, errs.InvalidRequest},
		{"an unknown mandate", live, src, "man_unknown", false, errs.NotFound},
		{"an unknown mandate, for a subscription", live, src, "man_unknown", true, errs.NotFound},
		{"another merchant's mandate", sandbox, f.VerifiedSource(sandbox, f.Customer(sandbox), "444455556666").ID, recurring, false, errs.NotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			var got *string
			if c.sub {
				var s payment.Subscription
				s, err = f.Payments.Subscribe(ctx, c.scope, payment.SubscriptionInput{SourceID: c.source, Amount: json.RawMessage(`"1.00"`),
					Interval: payment.Weekly, StartDate: "2026-11-09", MandateID: &c.mandate})
				got = s.MandateID
			} else {
				in := debit(c.source)
				in.MandateID = &c.mandate
				var p payment.Payment
				p, err = f.Payments.Create(ctx, c.scope, in)
				got = p.MandateID
			}
			if e, ok := errs.As(err); (c.want == "") != (err == nil) || (ok && (e.Code != c.want || e.Param != "mandate_id")) {
				t.Fatalf("got %v, want %q on mandate_id", err, c.want)
			}
			if err == nil && (got == nil || *got != c.mandate) {
				t.Errorf("mandate_id = %v, want %s", got, c.mandate)
			}
		})
	}
	in = debit(src)
	in.MandateID, in.Authorization = &recurring, consent()
	if _, err := f.Payments.Create(ctx, live, in); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("both mandate_id and authorization: %v, want invalid_request", err)
	}
	credit := pay(src, payment.Credit)
	credit.MandateID = &recurring
	if _, err := f.Payments.Create(ctx, live, credit); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("a credit with a mandate: %v, want invalid_request", err)
	}
}

func TestRevokingCancelsTheSubscriptionsItAuthorized(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	sub := func() payment.Subscription {
		s, err := f.Payments.Subscribe(ctx, scope, payment.SubscriptionInput{SourceID: src, Amount: json.RawMessage(`"9.99"`),
			Interval: payment.Weekly, StartDate: "2026-11-09"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := sub(), sub()
	m, err := f.Payments.Revoke(ctx, scope, *a.MandateID, payment.RevokeInput{Reason: ptr("customer called")}, audit.Operator("test"))
	if err != nil || m.Status != payment.MandateRevoked || m.RevokedAt == nil || m.RevokeReason == nil || *m.RevokeReason != "customer called" {
		t.Fatalf("revoke = %+v, %v", m, err)
	}
	if got, _ := f.Payments.GetSubscription(ctx, scope, a.ID); got.Status != payment.Canceled || *got.CancelReason != payment.CancelMandateRevoked {
		t.Errorf("its subscription: %s %v, want canceled mandate_revoked", got.Status, got.CancelReason)
	}
	if got, _ := f.Payments.GetSubscription(ctx, scope, b.ID); got.Status != payment.Active {
		t.Errorf("another mandate's subscription: %s, want active", got.Status)
	}
	again, err := f.Payments.Revoke(ctx, scope, *a.MandateID, payment.RevokeInput{}, audit.Operator("test"))
	if err != nil || !again.RevokedAt.Equal(*m.RevokedAt) || *again.RevokeReason != "customer called" {
		t.Errorf("revoking again = %+v, %v; want it as it was", again, err)
	}
	if _, err := f.Payments.Revoke(ctx, scope, *b.MandateID, payment.RevokeInput{Reason: ptr("")}, audit.Operator("test")); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("empty reason: %v, want invalid_request", err)
	}
	if _, err := f.Payments.Revoke(ctx, scope, "man_unknown", payment.RevokeInput{}, audit.Operator("test")); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown: %v, want resource_not_found", err)
	}
}

// TestRemovalKeepsMandates: removing a source leaves its mandates, and the
// schema refuses to delete one that is active or recently revoked.
func TestRemovalKeepsMandates(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	p, err := f.Payments.Create(ctx, scope, debit(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Consequences.Remove(ctx, scope, src); err != nil {
		t.Fatal(err)
	}
	m := mandateOf(t, f, scope, p.MandateID)
	if m.SourceID != src {
		t.Errorf("mandate after removal = %+v", m)
	}
	db := f.SQL()
	if _, err := db.Exec(`DELETE FROM mandates WHERE id = $1`, m.ID); err == nil {
		t.Error("deleting an active mandate succeeded")
	}
	if _, err := db.Exec(`DELETE FROM funding_sources WHERE id = $1`, src); err == nil {
		t.Error("deleting a source with mandates succeeded")
	}
	if _, err := f.Payments.Revoke(ctx, scope, m.ID, payment.RevokeInput{}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM mandates WHERE id = $1`, m.ID); err == nil {
		t.Error("deleting a mandate revoked today succeeded")
	}
	if _, err := db.Exec(`UPDATE mandates SET revoked_at = now() - interval '2 years 1 day' WHERE id = $1`, m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM payments WHERE mandate_id = $1`, m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM mandates WHERE id = $1`, m.ID); err != nil {
		t.Errorf("deleting a mandate revoked over two years ago: %v", err)
	}
}

// TestASingleMandateAuthorizesOneDebitUnderRace sends debits naming one
// unused single mandate at once: each statement's update of the mandate
// waits for the one before it and sees it used, so one debit is written.
// The mandate.created event of a debit's own mandate carries the source's
// customer and SEC code, which the statement writes.
func TestASingleMandateAuthorizesOneDebitUnderRace(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	live := production(t, f)
	user := f.Customer(live)
	src := f.VerifiedSource(live, user, "444455556666").ID
	in := debit(src)
	in.Authorization = consent()
	first, err := f.Payments.Create(ctx, live, in)
	if err != nil {
		t.Fatal(err)
	}
	db := f.SQL()
	var data []byte
	if err := db.QueryRow(`SELECT data FROM events WHERE type = 'mandate.created' AND data->>'mandate_id' = $1`, *first.MandateID).Scan(&data); err != nil {
		t.Fatal(err)
	}
	var ev payment.Mandate
	if err := json.Unmarshal(data, &ev); err != nil || ev.CustomerID != user || ev.SECCode != "WEB" || ev.SourceID != src {
		t.Errorf("mandate.created data = %s (%v)", data, err)
	}
	// The mandate as it would be before its debit: unused.
	if _, err := db.Exec(`UPDATE mandates SET used_at = NULL WHERE id = $1`, *first.MandateID); err != nil {
		t.Fatal(err)
	}
	const n = 8
	results := make(chan error, n)
	for range n {
		go func() {
			in := debit(src)
			in.MandateID = first.MandateID
			_, err := f.Payments.Create(ctx, live, in)
			results <- err
		}()
	}
	written := 0
	for range n {
		err := <-results
		switch e, _ := errs.As(err); {
		case err == nil:
			written++
		case e == nil || e.Code != errs.InvalidRequest || e.Param != "mandate_id":
			t.Errorf("a debit under a used mandate: %v, want invalid_request on mandate_id", err)
		}
	}
	if written != 1 {
		t.Errorf("%d debits written under one single mandate, want 1", written)
	}
}
