package api_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestSandboxNotificationOfChange corrects a source over HTTP as an
// imported NOC would, and refuses corrected data that does not fit the
// change code, a bank that does not exist, a number another source holds
// and a production key; no answer holds the full account number.
func TestSandboxNotificationOfChange(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	m := h.Merchant("Acme")
	key := m.Sandbox.SecretKey
	user := h.Customer(key)
	src := h.Source(key, user, "123456789")
	other := h.Source(key, h.Customer(key), "555566667777")
	path := "/v2/sandbox/funding-source/" + src + "/notification-of-change"
	for _, c := range []struct{ body, param string }{
		{`{"change_code":"C08","corrected_data":{"account_number":"99998888"}}`, "change_code"},
		{`{"change_code":"C04","corrected_data":{"account_number":"99998888"}}`, "corrected_data.account_number"},
		{`{"change_code":"C04","corrected_data":{}}`, "corrected_data.name"},
		{`{"change_code":"C09","corrected_data":{"individual_id":"SIXTEEN CHARS ID"}}`, "corrected_data.individual_id"},
		{`{"change_code":"C13","corrected_data":{"name":"X"}}`, "corrected_data.name"},
		{`{"change_code":"C01","corrected_data":{}}`, "corrected_data.account_number"},
		{`{"change_code":"C01","corrected_data":{"account_number":"99998888","account_type":"savings"}}`, "corrected_data.account_type"},
		{`{"change_code":"C01","corrected_data":{"account_number":"12ab"}}`, "corrected_data.account_number"},
		{`{"change_code":"C05","corrected_data":{"account_type":"brokerage"}}`, "corrected_data.account_type"},
	} {
		res := h.Post(path, key, c.body)
		if e, _ := res.JSON(t)["error"].(map[string]any); res.Code != http.StatusBadRequest || e["param"] != c.param {
			t.Errorf("%s: %d %s, want 400 on %s", c.body, res.Code, res.Body, c.param)
		}
	}
	th.WantError(t, h.Post(path, key, `{"change_code":"C02","corrected_data":{"routing_number":"123456789"}}`),
		http.StatusBadRequest, "invalid_routing_number")
	th.WantError(t, h.Post(path, key, `{"change_code":"C01","corrected_data":{"account_number":"555566667777"}}`),
		http.StatusConflict, "account_in_use")
	th.WantError(t, h.Post("/v2/sandbox/funding-source/"+other+"x/notification-of-change", key,
		`{"change_code":"C05","corrected_data":{"account_type":"savings"}}`), http.StatusNotFound, "funding_source_not_found")

	res := h.Post(path, key, `{"change_code":"C03","corrected_data":{"routing_number":"026009593","account_number":"99998888"}}`)
	got := th.WantOK(t, res)
	if got["last_four"] != "8888" || got["bank_name"] == nil || strings.Contains(string(res.Body), "99998888") {
		t.Errorf("corrected source: %s", res.Body)
	}
	if ev := h.Events("funding_source.updated"); len(ev) != 1 || ev[0]["change_code"] != "C03" {
		t.Errorf("funding_source.updated = %v", ev)
	}
	for _, c := range []string{`{"change_code":"C04","corrected_data":{"name":"JANE Q PUBLIC"}}`,
		`{"change_code":"C09","corrected_data":{"individual_id":"CUST-0042"}}`, `{"change_code":"C13","corrected_data":{}}`} {
		th.WantOK(t, h.Post(path, key, c))
	}
	var codes []string
	for _, ev := range h.Events("funding_source.updated") {
		codes = append(codes, ev["change_code"].(string))
	}
	sort.Strings(codes)
	if strings.Join(codes, ",") != "C03,C04,C09,C13" {
		t.Errorf("funding_source.updated change codes = %v", codes)
	}
	prod := h.Production(m).SecretKey
	th.WantError(t, h.Post(path, prod, `{"change_code":"C05","corrected_data":{"account_type":"savings"}}`),
		http.StatusForbidden, "permission_denied")
}

// TestSandboxNotificationOfChangeAnswersAsAGet: the simulation's answer is
// the source as a GET right after it reads, account check included (the
// change makes it caution, not unknown).
func TestSandboxNotificationOfChangeAnswersAsAGet(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	src := h.Source(key, h.Customer(key), "123456789")
	for _, body := range []string{
		`{"change_code":"C01","corrected_data":{"account_number":"99998888"}}`,
		`{"change_code":"C05","corrected_data":{"account_type":"savings"}}`,
	} {
		res := h.Post("/v2/sandbox/funding-source/"+src+"/notification-of-change", key, body)
		got := th.WantOK(t, res)
		get := h.Get("/v2/funding-source/"+src, key)
		th.WantOK(t, get)
		if string(res.Body) != string(get.Body) {
			t.Errorf("%s: the simulation answered\n%s\nthe GET after it\n%s", body, res.Body, get.Body)
		}
		if c, _ := got["account_check"].(map[string]any); c == nil || c["result"] == "unknown" {
			t.Errorf("%s: account_check %v, want the account's facts read", body, got["account_check"])
		}
	}
}
