package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/rail"
	"github.com/fundsource/fundsource/internal/app"
	"github.com/fundsource/fundsource/internal/config"
	"github.com/fundsource/fundsource/internal/funding"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func TestDevStartsPrivateClusterServesAndReusesData(t *testing.T) {
	base, err := os.MkdirTemp("", "fundsource-dev-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	// As root the server runs as postgres, which must traverse the parent.
	if err := os.Chmod(base, 0o711); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(base, "data")
	env := map[string]string{"DATA_DIR": dataDir, "PAYMENT_SETTLE_DELAY": "200ms"}
	dev := th.StartDev(t, th.DevOptions{Env: env})
	addr, simAddr, key := dev.Addr, dev.SimAddr, dev.SecretKey
	// The cluster takes a password, kept where only its owner reads it.
	if st, err := os.Stat(filepath.Join(dataDir, "postgres.password")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the cluster's password file: %v %v, want mode 0600", st, err)
	}
	demo := config.ReadEnvFile(filepath.Join(dataDir, "demo.env"))
	if demo["DEMO_SECRET_KEY"] != key || demo["DEMO_PUBLIC_KEY"] == "" || demo["DEMO_PASSWORD"] == "" || demo["DEMO_EMAIL"] == "" {
		t.Errorf("demo.env = %v", demo)
	}

	// A local receiver gets the signed events of the micro-deposit flow
	// that the printed key drives over real HTTP.
	baseURL := "http://" + addr
	rcAddr := th.FreeAddr(t)
	secret := api(t, "POST", baseURL+"/v2/webhooks", key, `{"url":"http://`+rcAddr+`/"}`)["secret"].(string)
	received := startReceiver(t, secret, rcAddr)
	id := api(t, "POST", baseURL+"/v2/customers", key, `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}`)["user_id"].(string)
	fs := api(t, "POST", baseURL+"/v2/funding-source", key, `{"user_id":"`+id+`","routing_number":"222222226","account_number":"000123456789"}`)["funding_source_id"].(string)
	api(t, "POST", baseURL+"/v2/funding-source/initiate/verification", key, `{"funding_source_id":"`+fs+`"}`)
	amounts, _ := json.Marshal(api(t, "GET", baseURL+"/v2/sandbox/funding-source/"+fs+"/micro-deposits", key, "")["amounts"])
	if v := api(t, "POST", baseURL+"/v2/funding-source/verify", key, `{"funding_source_id":"`+fs+`","amounts":`+string(amounts)+`}`); v["status"] != "Verified" {
		t.Fatalf("verify = %v", v)
	}
	want := []string{"customer.created", "funding_source.created", "funding_source.verification_pending", "funding_source.verified"}
	deadline := time.Now().Add(30 * time.Second)
	for !containsAll(received.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the receiver did not print every event:\n%s", received.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(received.String(), "REFUSED") || strings.Count(received.String(), "verified  evt_") != len(want) {
		t.Errorf("receiver output:\n%s", received.String())
	}

	hostedByHand(t, dev.Output(), baseURL, demo["DEMO_PUBLIC_KEY"], key, id)
	dashboardByHand(t, dev.Output(), baseURL, demo["DEMO_EMAIL"], demo["DEMO_PASSWORD"], fs)

	// Payments: a debit of an Unverified source is refused; one of the
	// Verified source settles and fires payment.success to the webhook.
	unverified := api(t, "POST", baseURL+"/v2/funding-source", key, `{"user_id":"`+id+`","routing_number":"222222226","account_number":"000555555555"}`)["funding_source_id"].(string)
	req, _ := http.NewRequest(http.MethodPost, baseURL+"/v2/payments",
		strings.NewReader(`{"funding_source_id":"`+unverified+`","amount":"25.00","direction":"debit"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("debit of an Unverified source: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	pay := api(t, "POST", baseURL+"/v2/payments", key, `{"funding_source_id":"`+fs+`","amount":"25.00","direction":"debit"}`)["payment_id"].(string)
	deadline = time.Now().Add(30 * time.Second)
	for !strings.Contains(received.String(), "payment.success") || !strings.Contains(received.String(), pay) {
		if time.Now().After(deadline) {
			t.Fatalf("no payment.success for %s at the receiver:\n%s", pay, received.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p := api(t, "GET", baseURL+"/v2/payments/"+pay, key, ""); p["status"] != "processed" {
		t.Errorf("payment after payment.success = %v", p)
	}

	// The five upstream steps of processor-token linking, as the README
	// shows them with curl, against the simulator 'make run' started.
	sim := "http://" + simAddr
	creds := `"client_id":"demo-merchant","secret":"demo-merchant-secret"`
	plaid := func(path, body string) map[string]any { return api(t, "POST", sim+path, "", `{`+creds+`,`+body+`}`) }
	plaid("/link/token/create", `"client_name":"Demo","language":"en","country_codes":["US"],"user":{"client_user_id":"`+id+`"},"products":["auth"]`)
	public := plaid("/sandbox/public_token/create", `"institution_id":"ins_109508","initial_products":["auth"]`)["public_token"].(string)
	access := plaid("/item/public_token/exchange", `"public_token":"`+public+`"`)["access_token"].(string)
	account := plaid("/accounts/get", `"access_token":"`+access+`"`)["accounts"].([]any)[0].(map[string]any)["account_id"].(string)
	token := plaid("/processor/token/create", `"access_token":"`+access+`","account_id":"`+account+`","processor":"service"`)["processor_token"].(string)
	linked := api(t, "POST", baseURL+"/v2/funding-source/processor/linking", key, `{"user_id":"`+id+`","processor_token":"`+token+`"}`)
	if linked["status"] != "Verified" || linked["bank_name"] != "First Platypus Bank" {
		t.Errorf("processor linking = %v", linked)
	}

	// An unknown key gets the 401 envelope.
	req, _ = http.NewRequest(http.MethodGet, "http://"+addr+"/v2/customers", nil)
	req.Header.Set("Authorization", "Bearer sk_test_"+strings.Repeat("Z", 43))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var unauth map[string]any
	_ = json.NewDecoder(res.Body).Decode(&unauth)
	res.Body.Close()
	if res.StatusCode != 401 || unauth["error"].(map[string]any)["code"] != "unauthorized" {
		t.Errorf("unknown key: %d %v", res.StatusCode, unauth)
	}

	if err := dev.Stop(); err != nil {
		t.Fatalf("dev stopped with %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postgres.port")); !os.IsNotExist(err) {
		t.Errorf("postgres.port left behind after a clean stop")
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postgres", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("the private cluster is still running after stop (postmaster.pid exists)")
	}

	// The next run reuses the cluster, the demo merchant and its key.
	again := th.StartDev(t, th.DevOptions{Env: env, Addr: addr, SimAddr: simAddr})
	if !strings.Contains(again.Output(), "reused") || again.SecretKey != key {
		t.Errorf("second run did not reuse the demo merchant:\n%s", again.Output())
	}
	req, _ = http.NewRequest(http.MethodGet, "http://"+addr+"/v2/customers/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("customer from the first run: %d, want 200", res.StatusCode)
	}
}

// hostedByHand verifies a second source through the hosted page the way
// a person would with 'make run': the printed link template, the page, and
// the form posted from the page itself.
func hostedByHand(t *testing.T, printed, baseURL, publicKey, key, customerID string) {
	t.Helper()
	template := baseURL + "/#/bank-account/" + publicKey + "/{user_id}/{funding_source_id}?successUrl="
	if !strings.Contains(printed, template) {
		t.Errorf("make run does not print the hosted link %s…:\n%s", template, printed)
	}
	fs := api(t, "POST", baseURL+"/v2/funding-source", key, `{"user_id":"`+customerID+`","routing_number":"222222226","account_number":"000987654321"}`)["funding_source_id"].(string)
	api(t, "POST", baseURL+"/v2/funding-source/initiate/verification", key, `{"funding_source_id":"`+fs+`"}`)
	var amounts [2]string
	for i, a := range api(t, "GET", baseURL+"/v2/sandbox/funding-source/"+fs+"/micro-deposits", key, "")["amounts"].([]any) {
		amounts[i] = fmt.Sprintf("%.2f", a.(float64))
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) string {
		res, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d\n%s", u, res.StatusCode, b)
		}
		return string(b)
	}
	if root := get(baseURL + "/"); !strings.Contains(root, "/static/js/hosted.js") || !strings.Contains(get(baseURL+"/static/js/hosted.js"), "bank-account") {
		t.Errorf("the hosted root does not load its router script:\n%s", root)
	}
	page := baseURL + "/bank-account/" + publicKey + "/" + customerID + "/" + fs + "?successUrl=" + url.QueryEscape("http://localhost:3000/done")
	if body := get(page); !strings.Contains(body, "Confirm your bank account") || !strings.Contains(body, "Demo Merchant") {
		t.Fatalf("hosted page:\n%s", body)
	}
	req, _ := http.NewRequest(http.MethodPost, page, strings.NewReader(url.Values{"amount1": {amounts[0]}, "amount2": {amounts[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", baseURL) // as the browser sends it from the page
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if want := "http://localhost:3000/done?funding_source_id=" + fs + "&status=Verified"; res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
		t.Errorf("hosted form: %d to %q, want 303 to %q", res.StatusCode, res.Header.Get("Location"), want)
	}
}

// api sends one request (with the key, when given) and returns the decoded 200 body.
func api(t *testing.T, method, url, key, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %v", method, url, res.StatusCode, m)
	}
	return m
}

// startReceiver runs 'fundsource webhook-receiver' until the test ends and
// returns its output.
func startReceiver(t *testing.T, secret, addr string) *th.SyncBuffer {
	t.Helper()
	out := &th.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, []string{"webhook-receiver", "--secret", secret, "--listen", addr},
			app.IO{Getenv: func(string) string { return "" }, Stdout: out, Stderr: io.Discard})
	}()
	t.Cleanup(func() { cancel(); <-done })
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return out
		}
		if i == 200 {
			t.Fatal("the webhook receiver did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func TestWebhookReceiverRefusesDeliveriesThatDoNotVerify(t *testing.T) {
	addr := th.FreeAddr(t)
	out := startReceiver(t, "whsec_"+strings.Repeat("A", 43)+"=", addr)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(`{"id":"evt_x","type":"webhook.test","data":{}}`))
	req.Header.Set("webhook-id", "evt_x")
	req.Header.Set("webhook-timestamp", fmt.Sprint(time.Now().Unix()))
	req.Header.Set("webhook-signature", "v1,"+strings.Repeat("A", 43)+"=")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(out.String(), "REFUSED  evt_x") {
		t.Errorf("forged delivery: %d, output %q", res.StatusCode, out.String())
	}
	var stderr bytes.Buffer
	err = app.Run(context.Background(), []string{"webhook-receiver"}, app.IO{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: &stderr})
	if !errors.Is(err, app.ErrUsage) || !strings.Contains(stderr.String(), "--secret") {
		t.Errorf("without a secret: %v\n%s", err, stderr.String())
	}
}

func TestProviderSimCommand(t *testing.T) {
	addr := th.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, []string{"provider-sim", "--listen", addr, "--client", "m1:s1", "--client", "svc:s2", "--processor-client", "svc"},
			app.IO{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard})
	}()
	defer func() { cancel(); <-done }()
	var res *http.Response
	var err error
	for range 200 {
		if res, err = http.Post("http://"+addr+"/sandbox/public_token/create", "application/json",
			strings.NewReader(`{"client_id":"m1","secret":"wrong","institution_id":"ins_109508","initial_products":["auth"]}`)); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	var perr map[string]any
	json.NewDecoder(res.Body).Decode(&perr)
	res.Body.Close()
	if res.StatusCode != 400 || perr["error_code"] != "INVALID_API_KEYS" || perr["error_type"] != "INVALID_INPUT" {
		t.Errorf("wrong secret: %d %v", res.StatusCode, perr)
	}
	ok := api(t, "POST", "http://"+addr+"/sandbox/public_token/create", "",
		`{"client_id":"m1","secret":"s1","institution_id":"ins_109508","initial_products":["auth"]}`)
	if !strings.HasPrefix(ok["public_token"].(string), "public-sandbox-") {
		t.Errorf("public token = %v", ok)
	}

	var stderr bytes.Buffer
	err = app.Run(context.Background(), []string{"provider-sim", "--client", "nocolon"}, app.IO{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: &stderr})
	if !errors.Is(err, app.ErrUsage) {
		t.Errorf("bad --client: %v", err)
	}
	err = app.Run(context.Background(), []string{"provider-sim", "--processor-client", "ghost"}, app.IO{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: &stderr})
	if !errors.Is(err, app.ErrUsage) {
		t.Errorf("unknown processor client: %v", err)
	}
}

// dashboardByHand signs in to the dashboard printed by 'make run' with the
// printed demo sign-in, over real HTTP with a cookie jar, and finds the
// verified source there.
func dashboardByHand(t *testing.T, out, baseURL, email, password, sourceID string) {
	t.Helper()
	if !strings.Contains(out, baseURL+"/dashboard/sign-in") {
		t.Errorf("make run does not print the dashboard address:\n%s", out)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	res, err := client.PostForm(baseURL+"/dashboard/sign-in", url.Values{"email": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Request.URL.Path != "/dashboard" || res.StatusCode != http.StatusOK {
		t.Fatalf("dashboard sign-in ended at %s with %d", res.Request.URL, res.StatusCode)
	}
	res, err = client.Get(baseURL + "/dashboard/funding-sources?status=verified")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), sourceID) {
		t.Errorf("the verified source is not in the dashboard (%d)", res.StatusCode)
	}
}

// The rail-sim command serves the rail: a credit to a sandbox account is
// rejected with its reason, over real HTTP through the product's client.
func TestRailSimCommand(t *testing.T) {
	addr := th.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, []string{"rail-sim", "--listen", addr, "--control-token", "railctl_test"}, app.IO{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard})
	}()
	defer func() { cancel(); <-done }()
	c := rail.New("http://"+addr+"/", rail.Options{})
	var got funding.RailAnswer
	var err error
	for range 200 {
		got, err = c.Credit(context.Background(), funding.InstantCredit{MessageID: "msg_1", RoutingNumber: "110000000",
			AccountNumber: "9900000006", AmountCents: 1, Remittance: "FSAAAA"})
		if err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil || got.Accepted || got.Reason != "AC06" {
		t.Errorf("got %+v, %v; want rejected AC06", got, err)
	}
	// The control and read routes answer only the control token.
	control := func(method, path, token string) int {
		req, _ := http.NewRequest(method, "http://"+addr+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, token := range []string{"", "railctl_wrong"} {
		if got := control(http.MethodGet, "/sim/credits", token); got != http.StatusNotFound {
			t.Errorf("GET /sim/credits with token %q: %d, want 404", token, got)
		}
		if got := control(http.MethodPost, "/sim/down", token); got != http.StatusNotFound {
			t.Errorf("POST /sim/down with token %q: %d, want 404", token, got)
		}
	}
	if _, err := c.Credit(context.Background(), funding.InstantCredit{MessageID: "msg_2", RoutingNumber: "110000000",
		AccountNumber: "9900000001", AmountCents: 1, Remittance: "FSAAAB"}); err != nil {
		t.Errorf("the rail went down without the token: %v", err)
	}
	if got := control(http.MethodGet, "/sim/credits", "railctl_test"); got != http.StatusOK {
		t.Errorf("GET /sim/credits with the token: %d", got)
	}
	if got := control(http.MethodPost, "/sim/down", "railctl_test"); got != http.StatusOK {
		t.Errorf("POST /sim/down with the token: %d", got)
	}
	if _, err := c.Credit(context.Background(), funding.InstantCredit{MessageID: "msg_3", RoutingNumber: "110000000",
		AccountNumber: "9900000001", AmountCents: 1, Remittance: "FSAAAC"}); err == nil {
		t.Error("the rail is still up after /sim/down with the token")
	}
	var stderr bytes.Buffer
	err = app.Run(context.Background(), []string{"rail-sim", "extra"}, app.IO{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: &stderr})
	if !errors.Is(err, app.ErrUsage) || !strings.Contains(stderr.String(), "9900000099") {
		t.Errorf("bad arguments: %v\n%s", err, stderr.String())
	}
}
