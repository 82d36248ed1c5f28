package payment_test

import (
	"encoding/json"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

func TestSearchFiltersByStatusDirectionAndSource(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	a := f.VerifiedSource(scope, f.Customer(scope), "111122223333").ID
	b := f.VerifiedSource(scope, f.Customer(scope), "444455556666").ID
	ids := map[string]string{}
	for name, in := range map[string]payment.Input{"a-debit": pay(a, payment.Debit), "a-credit": pay(a, payment.Credit), "b-debit": pay(b, payment.Debit)} {
		p, err := f.Payments.Create(ctx, scope, in)
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = p.ID
	}
	canceled, err := f.Payments.Cancel(ctx, scope, ids["b-debit"])
	if err != nil || canceled.Status != payment.Voided {
		t.Fatalf("cancel: %v %v", canceled.Status, err)
	}
	page := paging.Page{Limit: 10}
	for _, c := range []struct {
		name string
		f    payment.Filter
		want []string
	}{
		{"everything", payment.Filter{}, []string{"b-debit", "a-credit", "a-debit"}},
		{"debits", payment.Filter{Direction: payment.Debit}, []string{"b-debit", "a-debit"}},
		{"pending", payment.Filter{Status: "pending"}, []string{"a-credit", "a-debit"}},
		{"canceled debits", payment.Filter{Status: "canceled", Direction: payment.Debit}, []string{"b-debit"}},
		{"one source's credits", payment.Filter{SourceID: a, Direction: payment.Credit}, []string{"a-credit"}},
		{"processed", payment.Filter{Status: "processed"}, nil},
	} {
		got, _, err := f.Payments.Search(ctx, scope, c.f, page)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var names []string
		for _, p := range got {
			for n, id := range ids {
				if id == p.ID {
					names = append(names, n)
				}
			}
		}
		if !equalSets(names, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, names, c.want)
		}
	}
	for _, bad := range []payment.Filter{{Status: "settled"}, {Direction: "sideways"}} {
		if _, _, err := f.Payments.Search(ctx, scope, bad, page); errs.CodeOf(err) != errs.InvalidRequest {
			t.Errorf("filter %+v: %v, want invalid_request", bad, err)
		}
	}

	sub, err := f.Payments.Subscribe(ctx, scope, payment.SubscriptionInput{SourceID: a, Amount: json.RawMessage(`"5.00"`),
		Interval: "monthly", StartDate: fixture.Start.AddDate(0, 0, 3).Format("2006-01-02")})
	if err != nil {
		t.Fatal(err)
	}
	for status, want := range map[string]int{"": 1, "active": 1, "canceled": 0} {
		got, _, err := f.Payments.SearchSubscriptions(ctx, scope, payment.Filter{Status: status}, page)
		if err != nil || len(got) != want || (want == 1 && got[0].ID != sub.ID) {
			t.Errorf("subscriptions %q: %d, %v; want %d", status, len(got), err, want)
		}
	}
	if _, _, err := f.Payments.SearchSubscriptions(ctx, scope, payment.Filter{Status: "paused"}, page); errs.CodeOf(err) != errs.InvalidRequest {
		t.Errorf("unknown subscription status: %v", err)
	}
}

func equalSets(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
