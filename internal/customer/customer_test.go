package customer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

func ptr(s string) *string { return &s }

func valid() customer.Input {
	return customer.Input{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"}
}

func TestCreateRefusesInvalidInputByField(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	for _, c := range []struct {
		name      string
		change    func(*customer.Input)
		wantParam string
	}{
		{"missing first name", func(in *customer.Input) { in.FirstName = "" }, "first_name"},
		{"blank last name", func(in *customer.Input) { in.LastName = "  " }, "last_name"},
		{"first name too long", func(in *customer.Input) { in.FirstName = strings.Repeat("a", 101) }, "first_name"},
		{"email without @", func(in *customer.Input) { in.Email = "ada.example.com" }, "email"},
		{"missing email", func(in *customer.Input) { in.Email = "" }, "email"},
		{"business name too long", func(in *customer.Input) { in.BusinessName = ptr(strings.Repeat("b", 201)) }, "business_name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := valid()
			c.change(&in)
			_, err := f.Customers.Create(ctx, scope, in)
			e, ok := errs.As(err)
			if !ok || e.Code != errs.InvalidRequest || e.Param != c.wantParam {
				t.Errorf("got %v, want invalid_request on %s", err, c.wantParam)
			}
		})
	}
}

func TestCreateStoresTheCustomerWithItsEvent(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	in := valid()
	in.BusinessName = ptr("") // an empty business name is none
	c, err := f.Customers.Create(ctx, scope, in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.ID, "cus_") || c.BusinessName != nil || !c.CreatedAt.Equal(fixture.Start) {
		t.Errorf("got %+v, want a cus_ id, no business name, created at %v", c, fixture.Start)
	}
	got, err := f.Customers.Get(ctx, scope, c.ID)
	if err != nil || got.Email != in.Email {
		t.Errorf("Get = %+v, %v; want the stored customer", got, err)
	}
	evs, _, err := f.Webhooks.Events(ctx, scope, event.CustomerCreated, paging.Page{Limit: 10})
	if err != nil || len(evs) != 1 {
		t.Fatalf("customer.created events = %d, %v; want 1", len(evs), err)
	}
}

func TestCustomersAreSeenOnlyInTheirScope(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	acme, other := f.Sandbox("Acme"), f.Sandbox("Other")
	id := f.Customer(acme)
	for name, call := range map[string]func() error{
		"get": func() error { _, err := f.Customers.Get(ctx, other, id); return err },
		"update": func() error {
			_, err := f.Customers.Update(ctx, other, id, customer.Update{FirstName: ptr("X")})
			return err
		},
		"get unknown": func() error {
			_, err := f.Customers.Get(ctx, acme, "cus_unknown")
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			if err := call(); !errs.Is(err, errs.CustomerNotFound) {
				t.Errorf("got %v, want customer_not_found", err)
			}
		})
	}
}

func TestUpdateChangesOnlyTheGivenFields(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	c, err := f.Customers.Create(ctx, scope, customer.Input{FirstName: "Ada", LastName: "L", Email: "ada@example.com", BusinessName: ptr("Engines")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Customers.Update(ctx, scope, c.ID, customer.Update{})
	if e, ok := errs.As(err); !ok || e.Code != errs.InvalidRequest {
		t.Errorf("empty update: got %v, want invalid_request", err)
	}
	_, err = f.Customers.Update(ctx, scope, c.ID, customer.Update{Email: ptr("nope")})
	if e, ok := errs.As(err); !ok || e.Code != errs.InvalidRequest || e.Param != "email" {
		t.Errorf("bad email: got %v, want invalid_request on email", err)
	}
	got, err := f.Customers.Update(ctx, scope, c.ID, customer.Update{LastName: ptr("Lovelace"), BusinessName: ptr("")})
	if err != nil {
		t.Fatal(err)
	}
	if got.FirstName != "Ada" || got.LastName != "Lovelace" || got.BusinessName != nil {
		t.Errorf("got %+v, want first name kept, last name changed, business name removed", got)
	}
	// The same values again change nothing and record no event.
	if _, err := f.Customers.Update(ctx, scope, c.ID, customer.Update{LastName: ptr("Lovelace")}); err != nil {
		t.Fatal(err)
	}
	evs, _, err := f.Webhooks.Events(ctx, scope, event.CustomerUpdated, paging.Page{Limit: 10})
	if err != nil || len(evs) != 1 {
		t.Errorf("customer.updated events = %d, %v; want 1", len(evs), err)
	}
}

func TestSearchTextIsBounded(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	id := f.Customer(scope)
	_, _, err := f.Customers.Search(ctx, scope, strings.Repeat("x", customer.MaxSearchLen+1), paging.Page{Limit: 10})
	if e, ok := errs.As(err); !ok || e.Code != errs.InvalidRequest || e.Param != "q" {
		t.Errorf("long search: got %v, want invalid_request on q", err)
	}
	got, _, err := f.Customers.Search(ctx, scope, " "+id+" ", paging.Page{Limit: 10})
	if err != nil || len(got) != 1 || got[0].ID != id {
		t.Errorf("search by user_id = %v, %v; want the one customer", got, err)
	}
}
