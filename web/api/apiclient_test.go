package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/testing/apiclient"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestGeneratedClientMatchesTheServedDocument generates a Go client from
// the document the server serves, with the pinned oapi-codegen, and
// requires it to equal the committed internal/testing/apiclient: the client a
// merchant generates is the one the next test drives.
func TestGeneratedClientMatchesTheServedDocument(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	srv := h.Live()
	res, err := http.Get(srv.URL + "/v2/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /v2/openapi.json: %d, %v", res.StatusCode, err)
	}
	dir := t.TempDir()
	served, generated := filepath.Join(dir, "openapi.json"), filepath.Join(dir, "client.gen.go")
	if err := os.WriteFile(served, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "tool", "oapi-codegen", "-generate", "types,client", "-package", "apiclient", "-o", generated, served)
	cmd.Dir = ".." // the module, whose go.mod pins the tool
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, out)
	}
	got, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../../internal/testing/apiclient/client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Errorf("the client generated from the served document (%d bytes) differs from internal/testing/apiclient (%d bytes): run go generate ./internal/testing/apiclient",
			len(got), len(committed))
	}
}

// TestGeneratedClientRunsTheVerificationFlow: customer → source →
// micro-deposits → verify, through the generated client over real HTTP.
func TestGeneratedClientRunsTheVerificationFlow(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	srv := h.Live()
	key := h.Merchant("Acme").Sandbox.SecretKey
	c, err := apiclient.NewClientWithResponses(srv.URL, apiclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	must := func(what string, status int, body []byte, err error) {
		t.Helper()
		if err != nil || status != http.StatusOK {
			t.Fatalf("%s: %d, %v: %s", what, status, err, body)
		}
	}

	cu, err := c.CreateCustomerWithResponse(ctx, &apiclient.CreateCustomerParams{},
		apiclient.CreateCustomerJSONRequestBody{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"})
	must("create customer", cu.StatusCode(), cu.Body, err)

	src, err := c.CreateFundingSourceWithResponse(ctx, &apiclient.CreateFundingSourceParams{}, apiclient.CreateFundingSourceJSONRequestBody{
		UserId: cu.JSON200.UserId, RoutingNumber: "110000000", AccountNumber: "123456789"})
	must("create funding source", src.StatusCode(), src.Body, err)
	id := src.JSON200.FundingSourceId
	if src.JSON200.Status != apiclient.FundingSourceResponseStatusUnverified || src.JSON200.LastFour != "6789" {
		t.Errorf("new source: %s", src.Body)
	}

	ini, err := c.InitiateMicroDepositsWithResponse(ctx, &apiclient.InitiateMicroDepositsParams{}, apiclient.InitiateMicroDepositsJSONRequestBody{FundingSourceId: id})
	must("initiate", ini.StatusCode(), ini.Body, err)

	am, err := c.SandboxMicroDepositsWithResponse(ctx, id)
	must("sandbox amounts", am.StatusCode(), am.Body, err)
	if am.JSON200.Amounts == nil || len(*am.JSON200.Amounts) != 2 {
		t.Fatalf("amounts: %s", am.Body)
	}
	amounts := make([]apiclient.VerifyInput_Amounts_Item, 2)
	for i, a := range *am.JSON200.Amounts {
		if err := amounts[i].FromVerifyInputAmounts1(fmt.Sprintf("%.2f", a)); err != nil {
			t.Fatal(err)
		}
	}

	// A well-formed pair that is not the deposited one.
	miss := "0.98"
	if fmt.Sprintf("%.2f", (*am.JSON200.Amounts)[0]) == miss || fmt.Sprintf("%.2f", (*am.JSON200.Amounts)[1]) == miss {
		miss = "0.99"
	}
	wrong := make([]apiclient.VerifyInput_Amounts_Item, 2)
	for i := range wrong {
		if err := wrong[i].FromVerifyInputAmounts1(miss); err != nil {
			t.Fatal(err)
		}
	}
	bad, err := c.VerifyMicroDepositsWithResponse(ctx, &apiclient.VerifyMicroDepositsParams{}, apiclient.VerifyMicroDepositsJSONRequestBody{FundingSourceId: id, Amounts: &wrong})
	if err != nil || bad.StatusCode() == http.StatusOK || bad.JSONDefault == nil {
		t.Fatalf("wrong amounts: %d, %v: %s", bad.StatusCode(), err, bad.Body)
	}
	// The error's extra members are typed fields, read without a cast.
	if left := bad.JSONDefault.Error.AttemptsRemaining; left == nil || *left != 2 {
		t.Errorf("attempts_remaining of a wrong pair: %v: %s", left, bad.Body)
	}

	ok, err := c.VerifyMicroDepositsWithResponse(ctx, &apiclient.VerifyMicroDepositsParams{}, apiclient.VerifyMicroDepositsJSONRequestBody{FundingSourceId: id, Amounts: &amounts})
	must("verify", ok.StatusCode(), ok.Body, err)
	if ok.JSON200.Status != apiclient.FundingSourceResponseStatusVerified {
		t.Errorf("verified source: %s", ok.Body)
	}
	if got := th.WantOK(t, h.Get("/v2/funding-source/"+id, key)); got["status"] != "Verified" {
		t.Errorf("read back: %s", th.MustJSON(got))
	}
}

// TestTypeScriptTypesOfTheServedDocument generates TypeScript types from
// the served document with openapi-typescript (its defaults, as a merchant
// runs it) and type-checks, with tsc --strict, the README's minimal
// funding-source request (no account_type) and a read of every extra
// member of an error.
func TestTypeScriptTypesOfTheServedDocument(t *testing.T) {
	t.Parallel()
	tools := webtest.NodeToolsDir()
	bin := filepath.Join(tools, "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, "openapi-typescript")); err != nil {
		t.Fatalf("openapi-typescript is not installed in %s: run `make browser`", tools)
	}
	h := webtest.NewHarness(t)
	srv := h.Live()
	dir := t.TempDir()
	gen := exec.Command(filepath.Join(bin, "openapi-typescript"), srv.URL+"/v2/openapi.json", "-o", filepath.Join(dir, "api.d.ts"))
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("openapi-typescript: %v\n%s", err, out)
	}
	check := `import type { components } from "./api";
type Schemas = components["schemas"];
const minimal: Schemas["FundingSourceInput"] = { user_id: "cus_1", routing_number: "222222226", account_number: "000123456789" };
declare const failure: Schemas["ErrorResponse"];
const left: number | undefined = failure.error.attempts_remaining;
const existing: string | undefined = failure.error.funding_source_id;
const wait: string | undefined = failure.error.retry_after;
export const read = [minimal, left, existing, wait];
`
	if err := os.WriteFile(filepath.Join(dir, "check.ts"), []byte(check), 0o600); err != nil {
		t.Fatal(err)
	}
	tsc := exec.Command(filepath.Join(bin, "tsc"), "--noEmit", "--strict", "--target", "es2020", "--module", "es2020",
		"--moduleResolution", "node", filepath.Join(dir, "check.ts"))
	if out, err := tsc.CombinedOutput(); err != nil {
		t.Errorf("tsc on the generated types: %v\n%s", err, out)
	}
}
