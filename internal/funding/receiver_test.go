package funding_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

func ptr(s string) *string { return &s }

// TestAccountHolderTypeDefaultsToTheCustomers: a customer with a business
// name gets company sources, others individual ones, unless the input
// names one; the stored source (and its event) carries what was answered;
// any other value is invalid_request on account_holder_type and writes
// nothing; an update changes it and fires funding_source.updated.
func TestAccountHolderTypeDefaultsToTheCustomers(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	person := f.Customer(scope)
	biz, err := f.Customers.Create(ctx, scope, customer.Input{FirstName: "Bea", LastName: "Baker", Email: "bea@example.com", BusinessName: ptr("Bea's Bakery LLC")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		customer, account string
		holder            *string
		want              string
	}{
		{person, "10000001", nil, funding.HolderIndividual},
		{biz.ID, "10000002", nil, funding.HolderCompany}, // the guess is wrong: read, then written
		{biz.ID, "10000003", ptr("individual"), funding.HolderIndividual},
		{person, "10000004", ptr("company"), funding.HolderCompany},
	} {
		src, err := f.Funding.CreateForMicroDeposits(ctx, scope, funding.Input{CustomerID: c.customer, RoutingNumber: fixture.RoutingNumber,
			AccountNumber: c.account, AccountHolderType: c.holder})
		if err != nil || src.AccountHolderType != c.want {
			t.Errorf("%s: answered %q, %v; want %s", c.account, src.AccountHolderType, err, c.want)
			continue
		}
		got, err := f.DB.Source(ctx, scope, src.ID)
		if err != nil || got.AccountHolderType != c.want || got.IndividualID != strings15(src.ID) {
			t.Errorf("%s: stored %q %q, %v; want %s", c.account, got.AccountHolderType, got.IndividualID, err, c.want)
		}
	}
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM events WHERE type = 'funding_source.created' AND data->>'account_holder_type' = 'company'`); err != nil || n != 2 {
		t.Errorf("created events of company sources: %d, %v; want 2", n, err)
	}
	before := countSources(t, f)
	if _, err := f.Funding.CreateForMicroDeposits(ctx, scope, funding.Input{CustomerID: person, RoutingNumber: fixture.RoutingNumber,
		AccountNumber: "10000005", AccountHolderType: ptr("Company")}); !isInvalid(err, "account_holder_type") {
		t.Errorf("account_holder_type Company: %v", err)
	}
	if countSources(t, f) != before {
		t.Error("a refused creation wrote a source")
	}

	src := f.Source(scope, person, "10000006")
	if _, err := f.Funding.Update(ctx, scope, src.ID, funding.Update{AccountHolderType: ptr("trust")}); !isInvalid(err, "account_holder_type") {
		t.Errorf("update to trust: %v", err)
	}
	got, err := f.Funding.Update(ctx, scope, src.ID, funding.Update{AccountHolderType: ptr(funding.HolderCompany)})
	if err != nil || got.AccountHolderType != funding.HolderCompany {
		t.Fatalf("update = %q, %v", got.AccountHolderType, err)
	}
	if r, err := f.Funding.Receiver(ctx, scope, src.ID); err != nil || !r.Company || !strings.HasSuffix(r.Name, " L") {
		t.Errorf("receiver of a company source of a person = %+v, %v", r, err)
	}
	if err := f.SQL().Get(&n, `SELECT count(*) FROM events WHERE type = 'funding_source.updated' AND data->>'funding_source_id' = $1`, src.ID); err != nil || n != 1 {
		t.Errorf("updated events: %d, %v; want 1", n, err)
	}
	if _, err := f.Funding.Update(ctx, scope, src.ID, funding.Update{}); !isInvalid(err, "nickname") {
		t.Errorf("an empty update: %v", err)
	}
}

// TestReceiverNamesThePersonOrTheBusiness: an individual's source names
// the person even when the customer has a business name; a company's names
// the business.
func TestReceiverNamesThePersonOrTheBusiness(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	biz, err := f.Customers.Create(ctx, scope, customer.Input{FirstName: "Bea", LastName: "Baker", Email: "bea@example.com", BusinessName: ptr("Bea's Bakery LLC")})
	if err != nil {
		t.Fatal(err)
	}
	co := f.Source(scope, biz.ID, "20000001")
	own, err := f.Funding.CreateForMicroDeposits(ctx, scope, funding.Input{CustomerID: biz.ID, RoutingNumber: fixture.RoutingNumber,
		AccountNumber: "20000002", AccountHolderType: ptr(funding.HolderIndividual)})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]funding.Receiver{
		co.ID:  {Company: true, Name: "Bea's Bakery LLC", IndividualID: strings15(co.ID), Addenda: true, AccountFP: f.Funding.AccountFingerprint("20000001")},
		own.ID: {Company: false, Name: "Bea Baker", IndividualID: strings15(own.ID), Addenda: true, AccountFP: f.Funding.AccountFingerprint("20000002")},
	} {
		if got, err := f.Funding.Receiver(ctx, scope, id); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("receiver of %s = %+v, %v; want %+v", id, got, err, want)
		}
	}
}

// TestReceiverChangesKeepTheirHistory: C04, C09 and C13 through the
// sandbox's simulation change the receiver's name, identification number
// and addenda; each needs its own corrected value and refuses the others;
// the history keeps the replaced values.
func TestReceiverChangesKeepTheirHistory(t *testing.T) {
	t.Parallel()
	f := fixture.New(t)
	scope := f.Sandbox("Acme")
	src := f.Source(scope, f.Customer(scope), "30000001")
	for _, c := range []struct {
		in    funding.Correction
		param string
	}{
		{funding.Correction{ChangeCode: funding.ChangeName}, "corrected_data.name"},
		{funding.Correction{ChangeCode: funding.ChangeName, CorrectedData: funding.CorrectedData{Name: "TWENTY-THREE CHARACTERS"}}, "corrected_data.name"},
		{funding.Correction{ChangeCode: funding.ChangeName, CorrectedData: funding.CorrectedData{Name: "JOSÉ"}}, "corrected_data.name"},
		{funding.Correction{ChangeCode: funding.ChangeIndividualID, CorrectedData: funding.CorrectedData{IndividualID: "SIXTEEN-CHARS-ID"}}, "corrected_data.individual_id"},
		{funding.Correction{ChangeCode: funding.ChangeIndividualID, CorrectedData: funding.CorrectedData{Name: "X"}}, "corrected_data.name"},
		{funding.Correction{ChangeCode: funding.ChangeAddenda, CorrectedData: funding.CorrectedData{Name: "X"}}, "corrected_data.name"},
		{funding.Correction{ChangeCode: "C08"}, "change_code"},
	} {
		if _, err := f.Funding.SimulateChange(ctx, scope, src.ID, c.in); !isInvalid(err, c.param) {
			t.Errorf("%+v: %v, want invalid_request on %s", c.in, err, c.param)
		}
	}
	steps := []funding.Correction{
		{ChangeCode: funding.ChangeName, CorrectedData: funding.CorrectedData{Name: "JANE Q PUBLIC"}},
		{ChangeCode: funding.ChangeIndividualID, CorrectedData: funding.CorrectedData{IndividualID: "CUST-0042"}},
		{ChangeCode: funding.ChangeAddenda},
	}
	for _, c := range steps {
		if _, err := f.Funding.SimulateChange(ctx, scope, src.ID, c); err != nil {
			t.Fatalf("%s: %v", c.ChangeCode, err)
		}
	}
	r, err := f.Funding.Receiver(ctx, scope, src.ID)
	r.AccountFP = nil // the account is not what these changes correct
	if err != nil || !reflect.DeepEqual(r, funding.Receiver{Name: "JANE Q PUBLIC", IndividualID: "CUST-0042", Addenda: false}) {
		t.Errorf("receiver after C04, C09, C13 = %+v, %v", r, err)
	}
	var hist []struct {
		Code string  `db:"change_code"`
		Name *string `db:"old_receiver_name"`
		ID   *string `db:"old_individual_id"`
	}
	if err := f.SQL().Select(&hist, `SELECT change_code, old_receiver_name, old_individual_id FROM funding_source_changes
		WHERE funding_source_id = $1 ORDER BY created_at, change_code`, src.ID); err != nil || len(hist) != 3 {
		t.Fatalf("history = %+v, %v", hist, err)
	}
	if hist[0].Name != nil || *hist[1].Name != "JANE Q PUBLIC" || *hist[1].ID != strings15(src.ID) || *hist[2].ID != "CUST-0042" {
		t.Errorf("history keeps %+v %+v %+v", hist[0], hist[1], hist[2])
	}
	var facts int
	if err := f.SQL().Get(&facts, `SELECT count(*) FROM account_facts WHERE funding_source_id = $1 AND kind = 'corrected'`, src.ID); err != nil || facts != 0 {
		t.Errorf("corrected facts of receiver changes: %d, %v; want 0", facts, err)
	}
}

func strings15(id string) string {
	out := []byte(id[len(id)-15:])
	for i, c := range out {
		if c >= 'a' && c <= 'z' {
			out[i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

func isInvalid(err error, param string) bool {
	e, ok := errs.As(err)
	return ok && e.Code == errs.InvalidRequest && e.Param == param
}

func countSources(t *testing.T, f *fixture.Fixture) int {
	t.Helper()
	var n int
	if err := f.SQL().Get(&n, `SELECT count(*) FROM funding_sources`); err != nil {
		t.Fatal(err)
	}
	return n
}
