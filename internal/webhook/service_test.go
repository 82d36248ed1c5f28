package webhook_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

// wantCode fails unless err carries code and, when param is not "", names
// param.
func wantCode(t *testing.T, err error, code errs.Code, param string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != code {
		t.Fatalf("got error %v, want code %s", err, code)
	}
	if param != "" && e.Param != param {
		t.Errorf("param = %q, want %q (%v)", e.Param, param, err)
	}
}

// events lists the scope's events, all types, newest first.
func events(t *testing.T, f *fixture.Fixture, scope tenant.Scope) []event.Event {
	t.Helper()
	es, _, err := f.Webhooks.Events(ctx, scope, "", paging.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestWithoutAnEndpointEveryEndpointOperationIsWebhookNotFound: reading,
// deleting, enabling, rolling the secret of, testing and redelivering to a
// webhook the scope has not registered (or has deleted) all answer
// webhook_not_found and change nothing.
func TestWithoutAnEndpointEveryEndpointOperationIsWebhookNotFound(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	owner := f.Sandbox("Acme")
	f.Customer(owner) // a customer.created event to redeliver
	before := events(t, f, owner)
	if len(before) != 1 {
		t.Fatalf("events = %d, want the customer.created one", len(before))
	}
	ops := map[string]func(tenant.Scope) error{
		"Get":    func(s tenant.Scope) error { _, err := f.Webhooks.Get(ctx, s); return err },
		"Delete": func(s tenant.Scope) error { return f.Webhooks.Delete(ctx, s, audit.Operator("test")) },
		"Enable": func(s tenant.Scope) error { _, err := f.Webhooks.Enable(ctx, s, audit.Operator("test")); return err },
		"RollSecret": func(s tenant.Scope) error {
			_, err := f.Webhooks.RollSecret(ctx, s, audit.Operator("test"))
			return err
		},
		"SendTest":  func(s tenant.Scope) error { _, err := f.Webhooks.SendTest(ctx, s); return err },
		"Redeliver": func(s tenant.Scope) error { _, err := f.Webhooks.Redeliver(ctx, s, before[0].ID); return err },
	}
	check := func(t *testing.T, s tenant.Scope) {
		t.Helper()
		for name, op := range ops {
			if name == "Redeliver" && s != owner {
				continue // the event is not the other merchant's: event_not_found
			}
			t.Run(name, func(t *testing.T) { wantCode(t, op(s), errs.WebhookNotFound, "") })
		}
	}
	t.Run("never registered", func(t *testing.T) { check(t, owner) })

	if _, err := f.Webhooks.Register(ctx, owner, "https://hooks.example/a", audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	// The scope's endpoint is not another merchant's.
	t.Run("another merchant", func(t *testing.T) { check(t, f.Sandbox("Other")) })
	if err := f.Webhooks.Delete(ctx, owner, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	t.Run("deleted", func(t *testing.T) { check(t, owner) })

	after := events(t, f, owner)
	if len(after) != 1 || after[0].ID != before[0].ID {
		t.Errorf("refused operations recorded events: %d, want only %s", len(after), before[0].ID)
	}
	d, err := f.Webhooks.Event(ctx, owner, before[0].ID)
	if err != nil || len(d.Deliveries) != 0 {
		t.Errorf("a refused redelivery queued a delivery: %+v, %v", d.Deliveries, err)
	}
}

// TestAnUnknownOrForeignEventIsEventNotFound: an event id that does not
// exist, or belongs to another merchant or environment, answers
// event_not_found from Event and from Redeliver.
func TestAnUnknownOrForeignEventIsEventNotFound(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	owner := f.Sandbox("Acme")
	f.Customer(owner)
	id := events(t, f, owner)[0].ID
	other := f.Sandbox("Other")
	if _, err := f.ActivateProduction(ctx, owner.MerchantID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	production := tenant.Scope{MerchantID: owner.MerchantID, Env: tenant.Production}
	for _, s := range []tenant.Scope{owner, other, production} {
		if _, err := f.Webhooks.Register(ctx, s, "https://hooks.example/"+string(s.Env), audit.Operator("test")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		scope tenant.Scope
		id    string
	}{
		{"an unknown id", owner, "evt_unknown"},
		{"an empty id", owner, ""},
		{"another merchant's event", other, id},
		{"the other environment's event", production, id},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.Webhooks.Event(ctx, c.scope, c.id)
			wantCode(t, err, errs.EventNotFound, "id")
			_, err = f.Webhooks.Redeliver(ctx, c.scope, c.id)
			wantCode(t, err, errs.EventNotFound, "id")
		})
	}
	if d, err := f.Webhooks.Event(ctx, owner, id); err != nil || len(d.Deliveries) != 0 {
		t.Errorf("refused redeliveries queued deliveries on the event: %+v, %v", d.Deliveries, err)
	}
}

func TestEventsRefuseATypeFilterThatNamesNoEventType(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.Source(scope, f.Customer(scope), "123456789")
	if _, err := f.Funding.InitiateVerification(ctx, scope, src.ID); err != nil {
		t.Fatal(err)
	}
	for _, filter := range []string{"funding_source.verifed", "funding_source", "funding_source.", "*", ".*", "funding.*",
		"funding_source.**", "FUNDING_SOURCE.created", "customer.created ", "customer.*.created"} {
		t.Run(filter, func(t *testing.T) {
			_, _, err := f.Webhooks.Events(ctx, scope, filter, paging.Page{Limit: 10})
			wantCode(t, err, errs.InvalidRequest, "type")
		})
	}
	for filter, want := range map[string]int{"": 3, "customer.created": 1, "funding_source.*": 2, "funding_source.verified": 0} {
		es, _, err := f.Webhooks.Events(ctx, scope, filter, paging.Page{Limit: 10})
		if err != nil || len(es) != want {
			t.Errorf("filter %q: %d events, %v; want %d", filter, len(es), err, want)
		}
	}
}

// TestRegisterRefusesAURLThePolicyRefuses: the service answers invalid_url
// about the url field and stores nothing; production needs https.
func TestRegisterRefusesAURLThePolicyRefuses(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	if _, err := f.ActivateProduction(ctx, scope.MerchantID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	production := tenant.Scope{MerchantID: scope.MerchantID, Env: tenant.Production}
	for _, c := range []struct {
		scope tenant.Scope
		url   string
	}{
		{scope, ""},
		{scope, "/hooks"},
		{scope, "ftp://hooks.example/a"},
		{scope, "https://user:pass@hooks.example/a"},
		{scope, "https://hooks.example:70000/a"},
		{scope, "https://hooks.example/" + strings.Repeat("a", 2048)},
		{production, "http://hooks.example/a"},
	} {
		t.Run(string(c.scope.Env)+" "+c.url, func(t *testing.T) {
			_, err := f.Webhooks.Register(ctx, c.scope, c.url, audit.Operator("test"))
			wantCode(t, err, errs.InvalidURL, "url")
			_, err = f.Webhooks.Get(ctx, c.scope)
			wantCode(t, err, errs.WebhookNotFound, "")
		})
	}
	// A refused URL leaves a registered endpoint as it was.
	if _, err := f.Webhooks.Register(ctx, production, "https://hooks.example/live", audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	_, err := f.Webhooks.Register(ctx, production, "http://hooks.example/live", audit.Operator("test"))
	wantCode(t, err, errs.InvalidURL, "url")
	if r, err := f.Webhooks.Get(ctx, production); err != nil || r.WebhookURL != "https://hooks.example/live" {
		t.Errorf("after a refused change: %+v, %v", r, err)
	}
}
