package api_test

import (
	"context"
	"image/color"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/merchant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// auditRow is an audit event as stored.
type auditRow struct {
	Seq     int64  `db:"seq"`
	Action  string `db:"action"`
	Type    string `db:"actor_type"`
	ActorID string `db:"actor_id"`
	IP      string `db:"actor_ip"`
	Env     string `db:"environment"`
	Details string `db:"details"`
}

func auditRows(t *testing.T, h *webtest.Harness, merchantID string) []auditRow {
	t.Helper()
	var rows []auditRow
	err := h.SQL().SelectContext(context.Background(), &rows, `SELECT seq, action, actor_type, actor_id, actor_ip,
		COALESCE(environment, '') AS environment, details::text AS details FROM audit_events WHERE merchant_id = $1 ORDER BY seq`, merchantID)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestAuditRecordsEverySecurityChange: each listed action, from the API,
// the dashboard and the operator's side, is recorded with its actor and
// client address; the chain verifies; no secret, password or account
// number is in any event.
func TestAuditRecordsEverySecurityChange(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme Books")
	mid, key := m.Merchant.ID, m.Sandbox.SecretKey
	ctx := context.Background()
	keyID := func(env tenant.Environment) string {
		k, err := h.DB.Merchants().ActiveKey(ctx, tenant.Scope{MerchantID: mid, Env: env})
		if err != nil {
			t.Fatal(err)
		}
		return k.ID
	}
	sandboxKeyID := keyID(tenant.Sandbox)
	const apiIP = "203.0.113.7"
	api := func(method, path, body string) map[string]any {
		t.Helper()
		return th.WantOK(t, h.Do(th.Req{Method: method, Path: path, Key: key, Body: body, Remote: apiIP + ":4000"}))
	}

	// Operator: production, a permission.
	live := h.ProductionPending(m)
	if err := h.Merchants.GrantOnDemand(ctx, tenant.Scope{MerchantID: mid, Env: tenant.Production}, audit.Operator("ops")); err != nil {
		t.Fatal(err)
	}

	// API key: the webhook's life, a mandate revoked, a source unblocked.
	rc := th.NewReceiver(t, nil)
	hookURL := rc.URL() + "/hooks?token=s3cr3t-in-query"
	whSecret := api(http.MethodPost, "/v2/webhooks", `{"url":`+th.MustJSON(hookURL)+`}`)["secret"].(string)
	rolled := api(http.MethodPost, "/v2/webhooks/secret/roll", ``)["secret"].(string)
	api(http.MethodPost, "/v2/webhooks/enable", ``)
	api(http.MethodDelete, "/v2/webhooks", ``)
	user := h.Customer(key)
	const account = "222233334444"
	src := h.VerifiedSource(key, user, account)
	debit := api(http.MethodPost, "/v2/payments", th.PaymentBody(src, `"10.00"`, "debit"))
	api(http.MethodPost, "/v2/mandates/"+debit["mandate_id"].(string)+"/revoke", `{"revoke_reason":"customer called about `+account+`"}`)
	again := api(http.MethodPost, "/v2/payments", th.PaymentBody(src, `"11.00"`, "debit"))
	api(http.MethodPost, "/v2/sandbox/payments/"+again["payment_id"].(string)+"/return", `{"code":"R10"}`) // blocks src
	api(http.MethodPost, "/v2/funding-source/"+src+"/unblock", `{"attestation":"The customer authorized again."}`)

	// Dashboard user: a wrong password, sign-in, a key roll, settings,
	// sessions, the password, sign-out.
	d := webtest.NewDash(h) // from 192.0.2.10
	if p := d.SignIn(m.Merchant.Email, "not the password"); p.Code != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", p.Code)
	}
	if p := d.SignIn("nobody@example.com", "not the password"); p.Code != http.StatusUnauthorized {
		t.Fatalf("unknown email: %d", p.Code)
	}
	if p := d.SignIn(m.Merchant.Email, "correct horse battery"); p.Code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.Code)
	}
	home := webtest.WantPage(t, d.Follow(d.Post("/dashboard/keys/roll", url.Values{})), http.StatusOK)
	newKey := regexp.MustCompile(`sk_test_[A-Za-z0-9]{40,}`).FindString(home)
	if newKey == "" {
		t.Fatal("the rolled key is not shown")
	}
	d.Follow(d.Post("/dashboard/settings/redirect-origins", url.Values{"origin": {"https://shop.example"}}))
	d.Follow(d.Post("/dashboard/settings/redirect-origins/remove", url.Values{"origin": {"https://shop.example"}}))
	d.Follow(d.Post("/dashboard/settings/policies", url.Values{"account_check_policy": {"block_fail"}}))
	webtest.WantPage(t, d.Follow(d.BrandForm(map[string]string{"display_name": "Acme Books", "accent": "#1a7f5a"}, "logo.png",
		webtest.PngOf(t, 40, 20, color.RGBA{0x1a, 0x7f, 0x5a, 0xff}))), http.StatusOK, "Saved the hosted page")
	d.Follow(d.Post("/dashboard/settings/sessions/end-others", url.Values{}))
	const newPassword = "a brand new passphrase"
	d.Follow(d.Post("/dashboard/settings/password", url.Values{"current_password": {"correct horse battery"}, "new_password": {newPassword}}))
	if p := d.Post("/dashboard/sign-out", url.Values{}); p.Code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", p.Code)
	}

	const dashIP = "192.0.2.10"
	want := []struct{ action, typ, id, ip, env string }{
		{audit.MerchantProductionActivated, "operator", "test", "", "production"},
		{audit.MerchantPermissionChanged, "operator", "ops", "", "production"},
		{audit.WebhookURLSet, "api_key", sandboxKeyID, apiIP, "sandbox"},
		{audit.WebhookSecretRolled, "api_key", sandboxKeyID, apiIP, "sandbox"},
		{audit.WebhookEnabled, "api_key", sandboxKeyID, apiIP, "sandbox"},
		{audit.WebhookDeleted, "api_key", sandboxKeyID, apiIP, "sandbox"},
		{audit.MandateRevoked, "api_key", sandboxKeyID, apiIP, "sandbox"},
		{audit.FundingSourceUnblocked, "api_key", sandboxKeyID, apiIP, "sandbox"},
		{audit.DashboardSignInFailed, "dashboard_user", mid, dashIP, ""},
		{audit.DashboardSignedIn, "dashboard_user", mid, dashIP, ""},
		{audit.APIKeyRolled, "dashboard_user", mid, dashIP, "sandbox"},
		{audit.SettingsChanged, "dashboard_user", mid, dashIP, "sandbox"},
		{audit.SettingsChanged, "dashboard_user", mid, dashIP, "sandbox"},
		{audit.SettingsChanged, "dashboard_user", mid, dashIP, "sandbox"},
		{audit.SettingsChanged, "dashboard_user", mid, dashIP, ""}, // the brand: both environments
		{audit.DashboardSessionsRevoked, "dashboard_user", mid, dashIP, ""},
		{audit.DashboardPasswordChanged, "dashboard_user", mid, dashIP, ""},
		{audit.DashboardSignedOut, "dashboard_user", mid, dashIP, ""},
	}
	rows := auditRows(t, h, mid)
	if len(rows) != len(want) {
		for _, r := range rows {
			t.Logf("%+v", r)
		}
		t.Fatalf("%d events, want %d", len(rows), len(want))
	}
	for i, w := range want {
		r := rows[i]
		if r.Seq != int64(i+1) || r.Action != w.action || r.Type != w.typ || r.ActorID != w.id || r.IP != w.ip || r.Env != w.env {
			t.Errorf("event %d = %+v, want %+v", i+1, r, w)
		}
	}
	if u, _ := url.Parse(hookURL); rows[2].Details != `{"url_host": "http://`+u.Host+`"}` {
		t.Errorf("webhook.url_set details: %s", rows[2].Details)
	}
	if !strings.Contains(rows[10].Details, sandboxKeyID) {
		t.Errorf("api_key.rolled details: %s", rows[10].Details)
	}
	if d := rows[13].Details; !strings.Contains(d, `"setting": "policies"`) || !strings.Contains(d, `"account_check_policy": "block_fail"`) {
		t.Errorf("policies' settings.changed details: %s", d)
	}
	if d := rows[14].Details; !strings.Contains(d, `"setting": "brand"`) || !strings.Contains(d, `"logo": "replaced"`) || !strings.Contains(d, `"accent": "#1a7f5a"`) {
		t.Errorf("brand's settings.changed details: %s", d)
	}

	if b, err := h.Svc.Audit.Verify(ctx, mid, nil); err != nil || b != nil {
		t.Fatalf("verify: %v, %v", b, err)
	}

	// Nothing secret in any stored column of any event.
	var dump string
	if err := h.SQL().GetContext(ctx, &dump, `SELECT string_agg(a::text, E'\n') FROM audit_events a`); err != nil {
		t.Fatal(err)
	}
	for name, secret := range map[string]string{
		"sandbox key": key, "rolled sandbox key": newKey, "production key": live.SecretKey, "webhook secret": whSecret,
		"rolled webhook secret": rolled, "query token": "s3cr3t-in-query", "password": "correct horse battery",
		"new password": newPassword, "wrong password": "not the password", "account number": account,
	} {
		if strings.Contains(dump, secret) {
			t.Errorf("the audit log holds the %s", name)
		}
	}
}

// TestAuditEventsListNewestFirst: GET /v2/audit-events pages like every
// list, shows the key's environment and the whole account's events, not
// the other environment's, and the dashboard's Security log the same.
func TestAuditEventsListNewestFirst(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books") // dashboard.signed_in, account-wide
	m, err := h.Merchants.MerchantByEmail(t.Context(), "acme.books@example.com")
	if err != nil {
		t.Fatal(err)
	}
	h.ProductionPending(merchant.Created{Merchant: m}) // production only
	h.RegisterWebhook(key, th.NewReceiver(t, nil).URL())
	th.WantOK(t, h.Post("/v2/webhooks/secret/roll", key, ``))

	page := th.WantOK(t, h.Get("/v2/audit-events?limit=2", key))
	data := page["data"].([]any)
	if len(data) != 2 || page["has_more"] != true {
		t.Fatalf("first page: %s", th.MustJSON(page))
	}
	first, second := data[0].(map[string]any), data[1].(map[string]any)
	if first["action"] != "webhook.secret_rolled" || second["action"] != "webhook.url_set" || first["environment"] != "sandbox" ||
		len(first["hash"].(string)) != 64 || first["actor"].(map[string]any)["type"] != "api_key" {
		t.Errorf("first page: %s", th.MustJSON(page))
	}
	page = th.WantOK(t, h.Get("/v2/audit-events?starting_after="+second["id"].(string), key))
	data = page["data"].([]any)
	if len(data) != 1 || page["has_more"] != false || data[0].(map[string]any)["action"] != "dashboard.signed_in" ||
		data[0].(map[string]any)["environment"] != nil {
		t.Errorf("second page (production's activation must not show): %s", th.MustJSON(page))
	}
	th.WantError(t, h.Get("/v2/audit-events?starting_after=aud_unknown", key), http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Get("/v2/audit-events?action=x", key), http.StatusBadRequest, "invalid_request")
	th.WantError(t, h.Get("/v2/audit-events?limit=101", key), http.StatusBadRequest, "invalid_request")

	p := webtest.WantPage(t, d.Get("/dashboard/security"), http.StatusOK, "Security log", `aria-label="Security log"`,
		"webhook.secret_rolled", "webhook.url_set", "dashboard.signed_in", "API key", "Dashboard user", "192.0.2.10", "Whole account")
	if strings.Contains(p, "merchant.production_activated") {
		t.Error("the sandbox security log shows a production event")
	}
	webtest.WantPage(t, d.Get("/dashboard/security?after=aud_unknown"), http.StatusBadRequest)
}

// TestAuditChainStaysLinearUnderConcurrentWriters: many changes of one
// merchant at once still make one chain without gaps, which verifies.
func TestAuditChainStaysLinearUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme Books")
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Sandbox}
			origin := "https://shop" + string(rune('a'+i)) + ".example"
			_, err := h.Merchants.AllowRedirectOrigin(context.Background(), scope, origin, audit.DashboardUser(m.Merchant.ID, "192.0.2.1"))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rows := auditRows(t, h, m.Merchant.ID)
	if len(rows) != n {
		t.Fatalf("%d events, want %d", len(rows), n)
	}
	for i, r := range rows {
		if r.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i+1, r.Seq)
		}
	}
	if b, err := h.Svc.Audit.Verify(context.Background(), m.Merchant.ID, nil); err != nil || b != nil {
		t.Fatalf("verify: %v, %v", b, err)
	}
}

// TestAuditEventsHideAccountAddressesFromSandboxKeys: a sandbox key lists
// its environment's events as they are and the account's own (sign-ins)
// with actor.ip null; a production key and the dashboard's Security log
// show the sign-in's address.
func TestAuditEventsHideAccountAddressesFromSandboxKeys(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, key := webtest.SignedIn(t, h, "Acme Books")
	m, err := h.Merchants.MerchantByEmail(t.Context(), "acme.books@example.com")
	if err != nil {
		t.Fatal(err)
	}
	live := h.Production(merchant.Created{Merchant: m})
	h.RegisterWebhook(key, th.NewReceiver(t, nil).URL())

	ips := func(key string) map[string]any {
		out := map[string]any{}
		for _, e := range th.WantOK(t, h.Get("/v2/audit-events", key))["data"].([]any) {
			ev := e.(map[string]any)
			actor := ev["actor"].(map[string]any)
			if ip, ok := actor["ip"]; ok {
				out[ev["action"].(string)] = ip
			} else {
				t.Errorf("%s: actor without ip: %v", ev["action"], actor)
			}
		}
		return out
	}
	sandbox := ips(key)
	if sandbox["dashboard.signed_in"] != nil || sandbox["webhook.url_set"] == nil || sandbox["webhook.url_set"] == "" {
		t.Errorf("sandbox key: %v; want the sign-in's ip null and the webhook's shown", sandbox)
	}
	if production := ips(live.SecretKey); production["dashboard.signed_in"] != "192.0.2.10" {
		t.Errorf("production key: %v; want the sign-in's address", production)
	}
	webtest.WantPage(t, d.Get("/dashboard/security"), http.StatusOK, "dashboard.signed_in", "192.0.2.10")
}
