package payment_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/sanctions"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestAScreenedCustomersPaymentsAreHeldUntilCleared: a customer named
// like an entry of the (embedded) list is a potential match whose
// payments are held; clearing it sends them on and holds no more.
func TestAScreenedCustomersPaymentsAreHeldUntilCleared(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	c, err := f.Customers.Create(ctx, scope, customer.Input{FirstName: "Mirela", LastName: "Drakovic", Email: "m@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Screening.Status != sanctions.PotentialMatch || c.Screening.SDNEntry == nil || c.Screening.SDNEntry.Num != "9000001" {
		t.Fatalf("screening: got %+v, want potential_match of 9000001", c.Screening)
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM events WHERE type = 'customer.screening_match' AND data->>'user_id' = $1`, c.ID); err != nil || n != 1 {
		t.Fatalf("customer.screening_match events: got %d, %v; want 1", n, err)
	}
	src := f.VerifiedSource(scope, c.ID, account(1)).ID
	p, r := create(t, f, scope, money(src, payment.Debit, "10.00"))
	wantHold(t, "debit of a potential match", p, r, payment.HoldSanctions)
	credit, r := create(t, f, scope, money(src, payment.Credit, "10.00"))
	wantHold(t, "credit to a potential match", credit, r, payment.HoldSanctions)

	by := audit.Operator("reviewer")
	if _, _, err := f.Payments.ClearScreening(ctx, c.ID, "", by); !errs.Is(err, errs.InvalidRequest) {
		t.Errorf("clear without a note: got %v, want invalid_request", err)
	}
	sc, freed, err := f.Payments.ClearScreening(ctx, c.ID, "date of birth differs", by)
	if err != nil || sc.Status != sanctions.Cleared || len(freed) != 2 {
		t.Fatalf("clear: got %+v, %d freed, %v", sc, len(freed), err)
	}
	for _, id := range []string{p.ID, credit.ID} {
		if got, _ := f.Payments.Get(ctx, scope, id); got.Status != payment.Pending {
			t.Errorf("%s after clearance: got %s, want pending", id, got.Status)
		}
	}
	p, r = create(t, f, scope, money(src, payment.Debit, "10.00"))
	wantHold(t, "debit of a cleared customer", p, r, "")
	if _, _, err := f.Payments.ClearScreening(ctx, c.ID, "again", by); !errs.Is(err, errs.Conflict) {
		t.Errorf("clear of a cleared customer: got %v, want conflict", err)
	}
	if _, _, err := f.Payments.ClearScreening(ctx, "cus_unknown", "x", by); !errs.Is(err, errs.CustomerNotFound) {
		t.Errorf("clear of an unknown customer: got %v, want customer_not_found", err)
	}

	// A rename to the same entry stays cleared; an update to a clear name is clear.
	got, err := f.Customers.Update(ctx, scope, c.ID, customer.Update{FirstName: ptr("Mirella")})
	if err != nil || got.Screening.Status != sanctions.Cleared {
		t.Errorf("rename of a cleared customer: got %+v, %v; want cleared", got.Screening, err)
	}
	other, err := f.Customers.Create(ctx, scope, customer.Input{FirstName: "Jane", LastName: "Doe", Email: "j@example.com"})
	if err != nil || other.Screening.Status != sanctions.Clear {
		t.Fatalf("Jane Doe: got %+v, %v; want clear", other.Screening, err)
	}
	got, err = f.Customers.Update(ctx, scope, other.ID, customer.Update{BusinessName: ptr("Kestrel Trading FZE")})
	if err != nil || got.Screening.Status != sanctions.PotentialMatch || got.Screening.SDNEntry.Num != "9000002" {
		t.Errorf("business renamed to a listed name: got %+v, %v; want potential_match of 9000002", got.Screening, err)
	}
	if read, _ := f.Customers.Get(ctx, scope, other.ID); read.Screening.Status != sanctions.PotentialMatch {
		t.Errorf("stored screening: got %+v", read.Screening)
	}
}

// TestProductionEntriesAreScreenedAsTheyLeave: a customer screened clear
// whose name is on the list when its entry is claimed for a file (here:
// renamed behind the service's back, as a list update would find it) is
// marked, and its payment held instead of sent.
func TestProductionEntriesAreScreenedAsTheyLeave(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := envs(t, f)["production"]
	c, err := f.Customers.Create(ctx, scope, customer.Input{FirstName: "Ilya", LastName: "Orlov", Email: "i@example.com"})
	if err != nil || c.Screening.Status != sanctions.Clear {
		t.Fatalf("create: %+v, %v", c.Screening, err)
	}
	clear := f.VerifiedSource(scope, f.Customer(scope), account(2)).ID
	src := f.VerifiedSource(scope, c.ID, account(1)).ID
	p := newCredit(t, f, scope, src)
	sent := newCredit(t, f, scope, clear)
	if _, err := f.SQL().Exec(`UPDATE customers SET first_name = 'Ilya Petrovich', last_name = 'Volkanov' WHERE id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := originator(t, f).Run(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := f.Payments.Get(ctx, scope, p.ID)
	if got.Status != payment.Held || got.HoldReason == nil || *got.HoldReason != payment.HoldSanctions || inFile(t, f, p.ID) {
		t.Fatalf("payment of a listed name: got %s %v (in file %v), want held for sanctions, in no file", got.Status, got.HoldReason, inFile(t, f, p.ID))
	}
	if !inFile(t, f, sent.ID) {
		t.Errorf("another customer's payment was not sent")
	}
	read, _ := f.Customers.Get(ctx, scope, c.ID)
	if read.Screening.Status != sanctions.PotentialMatch {
		t.Errorf("customer after the claim: got %+v, want potential_match", read.Screening)
	}
	// Held, later claims leave it where it is.
	if _, err := originator(t, f).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if inFile(t, f, p.ID) {
		t.Fatalf("a held payment went into a file")
	}
	// Released by an operator, the next claim sends it.
	if _, _, err := f.Payments.ClearScreening(ctx, c.ID, "not the listed person", audit.Operator("r")); err != nil {
		t.Fatal(err)
	}
	if _, err := originator(t, f).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !inFile(t, f, p.ID) {
		t.Errorf("a cleared customer's payment was not sent")
	}
}
