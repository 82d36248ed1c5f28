package api_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// The instant-verification rules are internal/funding's tests; these check
// what HTTP adds: the method member, the verification object of an instant
// verification, the code on the sandbox endpoint and each refusal's status.

func TestInstantVerificationOverHTTP(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t) // the sandbox's in-process rail
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	id := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "110000000", "123456789")))["funding_source_id"].(string)

	th.WantError(t, h.InitiateBy(key, id, "sms"), 400, "invalid_request")
	r := th.WantOK(t, h.InitiateBy(key, id, "instant"))
	v := r["verification"].(map[string]any)
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if strings.Join(keys, ",") != "arrived_at,attempts_remaining,expires_at,failure_code,initiated_at,method,rail,rail_status,status" {
		t.Errorf("verification members = %v", keys)
	}
	if v["method"] != "instant" || v["rail"] != "rtp" || v["status"] != "pending" || v["failure_code"] != nil || v["arrived_at"] == nil || v["rail_status"] != "accepted" {
		t.Errorf("verification = %v", v)
	}
	code := h.Code(key, id)

	bad := h.Post("/v2/funding-source/verify", key, th.VerifyBody(id, `[0.1, 0.2]`))
	th.WantError(t, bad, 400, "invalid_request")
	if p := bad.ErrParam(t); p != "amounts" {
		t.Errorf("amounts against instant: param %q", p)
	}
	both := h.Post("/v2/funding-source/verify", key, `{"funding_source_id":"`+id+`","amounts":[0.1,0.2],"code":"`+code+`"}`)
	th.WantError(t, both, 400, "invalid_request")
	wrong := "FS2222"
	if code == wrong {
		wrong = "FS3333"
	}
	miss := h.Post("/v2/funding-source/verify", key, th.CodeBody(id, wrong))
	th.WantError(t, miss, 400, "verification_failed")
	if e := miss.JSON(t)["error"].(map[string]any); e["attempts_remaining"] != float64(2) || e["param"] != "code" {
		t.Errorf("wrong code: %v", e)
	}
	ok := th.WantOK(t, h.Post("/v2/funding-source/verify", key, th.CodeBody(id, " "+strings.ToLower(code[2:])+" ")))
	if ok["status"] != "Verified" {
		t.Errorf("right code: %v", ok)
	}

	// Micro-deposits refuse a code.
	md := h.Source(key, user, "223456789")
	th.WantOK(t, h.Initiate(key, md))
	r2 := h.Post("/v2/funding-source/verify", key, th.CodeBody(md, "FSABCD"))
	th.WantError(t, r2, 400, "invalid_request")
	if p := r2.ErrParam(t); p != "code" {
		t.Errorf("code against micro-deposits: param %q", p)
	}
}

func TestInstantReachabilityAndRejectionOverHTTP(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	key := h.Merchant("Acme").Sandbox.SecretKey
	user := h.Customer(key)
	far := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "333333334", "123456789")))["funding_source_id"].(string)
	th.WantError(t, h.InitiateBy(key, far, "instant"), 422, "instant_unavailable")
	v := th.WantOK(t, h.InitiateBy(key, far, "auto"))["verification"].(map[string]any)
	if v["method"] != "micro_deposits" || v["fallback_reason"] != "instant_unavailable" || v["expected_arrival_date"] == nil {
		t.Errorf("auto to an unreachable bank: %v", v)
	}

	closed := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(user, "222222226", railsim.AccountClosed)))["funding_source_id"].(string)
	v = th.WantOK(t, h.InitiateBy(key, closed, "instant"))["verification"].(map[string]any)
	if v["status"] != "failed" || v["failure_code"] != "AC04" || v["rail"] != "fednow" || v["arrived_at"] != nil || v["attempts_remaining"] != float64(0) || v["rail_status"] != "rejected" {
		t.Errorf("closed account: %v", v)
	}
	if evs := h.Events("funding_source.verification_failed"); len(evs) != 1 {
		t.Errorf("%d verification_failed events, want 1", len(evs))
	}
}

func TestRailDownAnswers503WithRetryAfter(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	h := webtest.NewHarness(t, th.WithRail(srv.URL))
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(h.Customer(key), "110000000", "123456789")))["funding_source_id"].(string)
	sim.SetDown(true)
	r := h.InitiateBy(key, id, "instant")
	th.WantError(t, r, 503, "rail_unavailable")
	if r.Header.Get("Retry-After") == "" {
		t.Error("rail_unavailable without Retry-After")
	}
	v := th.WantOK(t, h.InitiateBy(key, id, "auto"))["verification"].(map[string]any)
	if v["method"] != "micro_deposits" || v["fallback_reason"] != "rail_unavailable" {
		t.Errorf("auto while the rail is down: %v", v)
	}
	if n := len(sim.Credits()); n != 0 {
		t.Errorf("the rail recorded %d credits while down", n)
	}
}

// TestUnreadableRailAnswerOverHTTP: the rail took the credit and answered
// with a pacs.002 the service cannot read (here one of version .001.13).
// "instant" answers 200 with the verification pending and rail_status
// "unknown", not 503 rail_unavailable ("nothing was sent"); the credit is
// at the rail once.
func TestUnreadableRailAnswerOverHTTP(t *testing.T) {
	t.Parallel()
	sim := railsim.New()
	railURL, unreadable := th.UnreadableRail(t, sim)
	unreadable.Store(true)
	h := webtest.NewHarness(t, th.WithRail(railURL))
	key := h.Merchant("Acme").Sandbox.SecretKey
	id := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(h.Customer(key), "110000000", "123456789")))["funding_source_id"].(string)
	v := th.WantOK(t, h.InitiateBy(key, id, "instant"))["verification"].(map[string]any)
	if v["method"] != "instant" || v["status"] != "pending" || v["rail_status"] != "unknown" || v["arrived_at"] != nil || v["failure_code"] != nil {
		t.Errorf("verification after an unreadable answer = %v", v)
	}
	got := th.WantOK(t, h.Get("/v2/funding-source/"+id, key))["verification"].(map[string]any)
	if got["rail_status"] != "unknown" {
		t.Errorf("GET's verification = %v", got)
	}
	if n := len(sim.Credits()); n != 1 {
		t.Errorf("the rail recorded %d credits, want 1", n)
	}
}

// TestAHungRailHoldsNoTransaction: while the rail gives no answer (the
// simulator's timeout account), no database session sits idle in a
// transaction, without an Idempotency-Key and with one (whose request
// commits the credit's intent with the key before the credit leaves).
// The answers are the rail's silence's: "instant" is 503 rail_unavailable
// with nothing stored, "auto" falls back to micro-deposits.
func TestAHungRailHoldsNoTransaction(t *testing.T) {
	t.Parallel()
	for _, keyed := range []bool{false, true} {
		t.Run(fmt.Sprintf("keyed=%v", keyed), func(t *testing.T) {
			t.Parallel()
			sim := railsim.New()
			srv := httptest.NewServer(sim.Handler())
			defer srv.Close()
			h := webtest.NewHarness(t, th.WithRail(srv.URL))
			key := h.Merchant("Acme").Sandbox.SecretKey
			id := th.WantOK(t, h.Post("/v2/funding-source", key, th.SourceBody(h.Customer(key), "110000000", railsim.AccountTimeout)))["funding_source_id"].(string)
			// initiate asks for a verification by method while the rail hangs
			// and fails unless no session was idle in a transaction meanwhile.
			send := func(method string) *th.Response {
				r := th.Req{Method: "POST", Path: "/v2/funding-source/initiate/verification", Key: key,
					Body: `{"funding_source_id":"` + id + `","method":"` + method + `"}`}
				if keyed {
					r.Header = map[string]string{"Idempotency-Key": "verify-" + method}
				}
				return h.Do(r)
			}
			initiate := func(method string) *th.Response {
				t.Helper()
				return h.HoldsNoTransaction(t, method+" while the rail hung", func() *th.Response { return send(method) })
			}
			th.WantError(t, initiate("instant"), 503, "rail_unavailable")
			if n, i := h.Count("micro_deposits"), h.Count("verification_intents"); n != 0 || i != 0 {
				t.Fatalf("the rail's silence left %d verifications and %d intents, want none", n, i)
			}
			v := th.WantOK(t, initiate("auto"))["verification"].(map[string]any)
			if v["method"] != "micro_deposits" || v["fallback_reason"] != "rail_unavailable" || v["status"] != "pending" {
				t.Errorf("auto while the rail hung: %v", v)
			}
			if n, i := h.Count("micro_deposits"), h.Count("verification_intents"); n != 1 || i != 0 {
				t.Errorf("auto left %d verifications and %d intents, want 1 and none", n, i)
			}
			if keyed {
				again := send("auto")
				if again.Header.Get("Idempotent-Replayed") != "true" {
					t.Errorf("a second auto request with the key was not replayed: %s", again.Body)
				}
			}
		})
	}
}
