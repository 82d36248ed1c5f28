package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func TestCreateGetListCustomer(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey

	created := th.WantOK(t, h.Post("/v2/customers", key,
		`{"first_name":" Ada ","last_name":"Lovelace","email":"ada@example.com","business_name":"Analytical Engines"}`))
	id, _ := created["user_id"].(string)
	if !strings.HasPrefix(id, "cus_") || len(id) != 30 {
		t.Fatalf("user_id = %q, want cus_ + 26 characters", id)
	}
	if created["first_name"] != "Ada" {
		t.Errorf("first_name = %q, want trimmed %q", created["first_name"], "Ada")
	}
	if created["business_name"] != "Analytical Engines" {
		t.Errorf("business_name = %v", created["business_name"])
	}

	got := th.WantOK(t, h.Get("/v2/customers/"+id, key))
	for _, f := range []string{"user_id", "first_name", "last_name", "email", "business_name", "created_at"} {
		if got[f] != created[f] {
			t.Errorf("GET %s = %v, created %v", f, got[f], created[f])
		}
	}

	list := th.WantOK(t, h.Get("/v2/customers", key))
	data := list["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["user_id"] != id || list["has_more"] != false {
		t.Errorf("list = %s", th.MustJSON(list))
	}

	// The creation wrote its customer.created event in the same transaction.
	var ev struct {
		Type string `db:"type"`
		Data string `db:"data"`
	}
	if err := h.SQL().Get(&ev, `SELECT type, data::text AS data FROM events`); err != nil {
		t.Fatalf("event row: %v", err)
	}
	var data2 map[string]any
	_ = json.Unmarshal([]byte(ev.Data), &data2)
	if ev.Type != "customer.created" || data2["user_id"] != id {
		t.Errorf("event = %s %s, want customer.created for %s", ev.Type, ev.Data, id)
	}
}

func TestCustomerValidation(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	cases := []struct {
		name, body, param string
	}{
		{"missing first_name", `{"last_name":"L","email":"a@example.com"}`, "first_name"},
		{"missing last_name", `{"first_name":"A","email":"a@example.com"}`, "last_name"},
		{"missing email", `{"first_name":"A","last_name":"L"}`, "email"},
		{"long business_name", `{"first_name":"A","last_name":"L","email":"a@example.com","business_name":"` + strings.Repeat("b", 201) + `"}`, "business_name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.Post("/v2/customers", key, c.body)
			th.WantError(t, r, http.StatusBadRequest, "invalid_request")
			if got := r.ErrParam(t); got != c.param {
				t.Errorf("param = %q, want %q", got, c.param)
			}
		})
	}
	if n := h.Count("customers"); n != 0 {
		t.Errorf("%d customers stored after invalid requests, want 0", n)
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	var ids []string // oldest first
	for i := range 25 {
		h.Clock.Advance(time.Second)
		r := th.WantOK(t, h.Post("/v2/customers", key,
			fmt.Sprintf(`{"first_name":"C%d","last_name":"L","email":"c%d@example.com"}`, i, i)))
		ids = append(ids, r["user_id"].(string))
	}
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		path := "/v2/customers?limit=10"
		if cursor != "" {
			path += "&starting_after=" + cursor
		}
		r := th.WantOK(t, h.Get(path, key))
		data := r["data"].([]any)
		for _, d := range data {
			seen = append(seen, d.(map[string]any)["user_id"].(string))
		}
		more := r["has_more"].(bool)
		if wantMore := page < 2; more != wantMore {
			t.Fatalf("page %d has_more = %v, want %v", page, more, wantMore)
		}
		if !more {
			break
		}
		cursor = seen[len(seen)-1]
	}
	if len(seen) != 25 {
		t.Fatalf("saw %d customers over the pages, want 25", len(seen))
	}
	for i, id := range seen { // newest first, each exactly once
		if want := ids[24-i]; id != want {
			t.Fatalf("position %d = %s, want %s", i, id, want)
		}
	}
	if r := th.WantOK(t, h.Get("/v2/customers", key)); len(r["data"].([]any)) != 10 {
		t.Errorf("default page size = %d, want 10", len(r["data"].([]any)))
	}
	for _, bad := range []string{"limit=0", "limit=101", "limit=ten", "starting_after=cus_unknown"} {
		r := h.Get("/v2/customers?"+bad, key)
		th.WantError(t, r, http.StatusBadRequest, "invalid_request")
		if p := r.ErrParam(t); !strings.HasPrefix(bad, p+"=") {
			t.Errorf("%s: param = %q", bad, p)
		}
	}
}

func TestIsolationBetweenMerchantsAndEnvironments(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	a, b := h.Merchant("Alpha"), h.Merchant("Beta")
	aLive := h.Production(a).SecretKey
	id := th.WantOK(t, h.Post("/v2/customers", a.Sandbox.SecretKey, webtest.Ada))["user_id"].(string)

	for name, key := range map[string]string{"other merchant": b.Sandbox.SecretKey, "same merchant, production key": aLive} {
		t.Run(name, func(t *testing.T) {
			th.WantError(t, h.Get("/v2/customers/"+id, key), http.StatusNotFound, "customer_not_found")
			if data := th.WantOK(t, h.Get("/v2/customers", key))["data"].([]any); len(data) != 0 {
				t.Errorf("list shows %d customers of another tenant", len(data))
			}
			// Another tenant's id is no cursor either.
			th.WantError(t, h.Get("/v2/customers?starting_after="+id, key), http.StatusBadRequest, "invalid_request")
		})
	}
	th.WantOK(t, h.Get("/v2/customers/"+id, a.Sandbox.SecretKey))
}
