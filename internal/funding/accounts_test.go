package funding_test

import (
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

func input(customerID, account string) funding.Input {
	return funding.Input{CustomerID: customerID, RoutingNumber: fixture.RoutingNumber, AccountNumber: account}
}

// thirdParty is the caller of the on-demand path with third-party
// verification: its sources are Verified at creation.
func thirdParty(scope tenant.Scope) funding.Caller {
	return funding.Caller{Scope: scope, OnDemand: true, ThirdPartyVerification: true}
}

func TestThirdPartyPathUpgradesTheSameCustomersUnverifiedSource(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	cus := f.Customer(scope)
	unverified := f.Source(scope, cus, "000123456789")
	got, err := f.Funding.CreateOnDemand(ctx, thirdParty(scope), input(cus, "000123456789"))
	if err != nil {
		t.Fatalf("create Verified over Unverified: %v", err)
	}
	if got.ID != unverified.ID || got.Status != funding.Verified {
		t.Errorf("got %s %s, want the same source %s upgraded to %s", got.ID, got.Status, unverified.ID, funding.Verified)
	}
	stored, err := f.Funding.Get(ctx, scope, unverified.ID)
	if err != nil || stored.Status != funding.Verified {
		t.Errorf("stored status = %s (%v), want %s", stored.Status, err, funding.Verified)
	}
}

func TestSameCustomersNumberAgainIsDuplicate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name               string
		existing, creating funding.Status
	}{
		{"unverified over unverified", funding.Unverified, funding.Unverified},
		{"unverified over verified", funding.Verified, funding.Unverified},
		{"verified over verified", funding.Verified, funding.Verified},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := fixture.New(t)
			scope := f.Sandbox("Acme")
			cus := f.Customer(scope)
			var existing funding.Source
			if c.existing == funding.Verified {
				existing = f.VerifiedSource(scope, cus, "123456789")
			} else {
				existing = f.Source(scope, cus, "123456789")
			}
			var err error
			if c.creating == funding.Verified {
				_, err = f.Funding.CreateOnDemand(ctx, thirdParty(scope), input(cus, "123456789"))
			} else {
				_, err = f.Funding.CreateForMicroDeposits(ctx, scope, input(cus, "123456789"))
			}
			e := wantCode(t, err, errs.DuplicateFundingSource)
			if e.Param != "account_number" {
				t.Errorf("param = %q, want account_number", e.Param)
			}
			if got := e.Details["funding_source_id"]; got != existing.ID {
				t.Errorf("funding_source_id = %v, want %s", got, existing.ID)
			}
		})
	}
}

func TestAnotherCustomersNumberIsAccountInUse(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	acme := f.Sandbox("Acme")
	f.Source(acme, f.Customer(acme), "123456789")
	other := f.Sandbox("Other")
	for _, c := range []struct {
		name     string
		scope    tenant.Scope
		verified bool
	}{
		{"same merchant, micro-deposit path", acme, false},
		{"same merchant, third-party path", acme, true},
		{"another merchant in the same environment", other, false},
		{"another merchant, third-party path", other, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := input(f.Customer(c.scope), "123456789")
			var err error
			if c.verified {
				_, err = f.Funding.CreateOnDemand(ctx, thirdParty(c.scope), in)
			} else {
				_, err = f.Funding.CreateForMicroDeposits(ctx, c.scope, in)
			}
			e := wantCode(t, err, errs.AccountInUse)
			if e.Message != "This bank account is associated with another user" {
				t.Errorf("message = %q, want the contract's exact message", e.Message)
			}
			if e.Param != "account_number" {
				t.Errorf("param = %q, want account_number", e.Param)
			}
		})
	}
}

func TestAccountNumbersAreUniquePerEnvironmentOnly(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	sandbox := f.Sandbox("Acme")
	f.Source(sandbox, f.Customer(sandbox), "123456789")
	m := f.Merchant("Other")
	if _, err := f.ActivateProduction(ctx, m.Merchant.ID, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	production := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	if _, err := f.Funding.CreateForMicroDeposits(ctx, production, input(f.Customer(production), "123456789")); err != nil {
		t.Errorf("the sandbox's number in production: %v, want accepted", err)
	}
	ok, err := f.Funding.AccountAvailable(ctx, production, "123456789")
	if err != nil || ok {
		t.Errorf("AccountAvailable in production = %v, %v; want false once taken there", ok, err)
	}
}

func TestLeadingZerosMakeAnotherAccountNumber(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	f.Source(scope, f.Customer(scope), "123456789")
	if _, err := f.Funding.CreateForMicroDeposits(ctx, scope, input(f.Customer(scope), "0123456789")); err != nil {
		t.Errorf("0123456789 beside 123456789: %v, want accepted", err)
	}
}

func TestRemovalFreesTheAccountNumber(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	acme := f.Sandbox("Acme")
	src := f.Source(acme, f.Customer(acme), "123456789")
	if ok, err := f.Funding.AccountAvailable(ctx, acme, "123456789"); err != nil || ok {
		t.Fatalf("AccountAvailable while held = %v, %v; want false", ok, err)
	}
	removed, err := f.Consequences.Remove(ctx, acme, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !removed.Removed || removed.RemovedAt == nil {
		t.Errorf("removed = %v at %v, want removed with a time", removed.Removed, removed.RemovedAt)
	}
	if _, err := f.Consequences.Remove(ctx, acme, src.ID); err != nil {
		t.Errorf("removing again: %v, want success", err)
	}
	if ok, err := f.Funding.AccountAvailable(ctx, acme, "123456789"); err != nil || !ok {
		t.Errorf("AccountAvailable after removal = %v, %v; want true", ok, err)
	}
	other := f.Sandbox("Other")
	if _, err := f.Funding.CreateForMicroDeposits(ctx, other, input(f.Customer(other), "123456789")); err != nil {
		t.Errorf("another merchant's customer after removal: %v, want accepted", err)
	}
	got, err := f.Funding.Get(ctx, acme, src.ID)
	if err != nil || !got.Removed {
		t.Errorf("Get of the removed source = removed %v, %v; want it still readable", got.Removed, err)
	}
}

func TestRemoveAccountFindsOnlyTheCustomersOwnNumber(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	cus := f.Customer(scope)
	src := f.Source(scope, cus, "123456789")
	notLinked := func(err error) {
		t.Helper()
		wantCode(t, err, errs.FundingSourceNotFound)
		if e, _ := errs.As(err); e == nil || e.Param != "account_number" || !strings.Contains(e.Message, "account number") {
			t.Errorf("not found by account number: %v, want param account_number and a message about the account number", err)
		}
	}
	_, err := f.Consequences.RemoveAccount(ctx, scope, f.Customer(scope), "123456789")
	notLinked(err)
	_, err = f.Consequences.RemoveAccount(ctx, scope, cus, "999999999")
	notLinked(err)
	got, err := f.Consequences.RemoveAccount(ctx, scope, cus, "123456789")
	if err != nil || got.ID != src.ID || !got.Removed {
		t.Errorf("RemoveAccount = %s removed %v, %v; want %s removed", got.ID, got.Removed, err, src.ID)
	}
	// The number is no longer linked: the answer names it, not an id.
	_, err = f.Consequences.RemoveAccount(ctx, scope, cus, "123456789")
	notLinked(err)
}

func TestCreationRulesAboutTheCallerAndCustomer(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	cus := f.Customer(scope)
	for _, c := range []struct {
		name   string
		create func() (funding.Source, error)
		want   errs.Code
	}{
		{"on-demand without the permission", func() (funding.Source, error) {
			return f.Funding.CreateOnDemand(ctx, funding.Caller{Scope: scope}, input(cus, "123456789"))
		}, errs.PermissionDenied},
		{"unknown customer", func() (funding.Source, error) {
			return f.Funding.CreateForMicroDeposits(ctx, scope, input("cus_unknown", "123456789"))
		}, errs.CustomerNotFound},
		{"another merchant's customer", func() (funding.Source, error) {
			other := f.Sandbox("Other")
			return f.Funding.CreateForMicroDeposits(ctx, other, input(cus, "123456789"))
		}, errs.CustomerNotFound},
		{"bad routing number", func() (funding.Source, error) {
			return f.Funding.CreateForMicroDeposits(ctx, scope, funding.Input{CustomerID: cus, RoutingNumber: "021000022", AccountNumber: "123456789"})
		}, errs.InvalidRoutingNumber},
		{"short account number", func() (funding.Source, error) {
			return f.Funding.CreateForMicroDeposits(ctx, scope, input(cus, "123"))
		}, errs.InvalidAccountNumber},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.create()
			wantCode(t, err, c.want)
		})
	}
	// On-demand without third-party verification: Unverified, credit only.
	got, err := f.Funding.CreateOnDemand(ctx, funding.Caller{Scope: scope, OnDemand: true}, input(cus, "123456789"))
	if err != nil || got.Status != funding.Unverified {
		t.Errorf("on-demand without third-party verification = %s, %v; want %s", got.Status, err, funding.Unverified)
	}
}
