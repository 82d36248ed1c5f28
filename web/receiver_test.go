package web_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// received is one request a test receiver got.
type received struct {
	Header http.Header
	Body   []byte
}

// Payload decodes the body as an event envelope.
func (r received) Payload(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("webhook body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// receiver is a webhook endpoint for tests. respond answers the n-th request
// (from 0); nil answers 200.
type receiver struct {
	srv     *httptest.Server
	respond func(n int, w http.ResponseWriter)

	mu  sync.Mutex
	got []received
}

func newReceiver(t testing.TB, respond func(n int, w http.ResponseWriter)) *receiver {
	rc := &receiver{respond: respond}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		checkEvent(t, body)
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, received{Header: r.Header.Clone(), Body: body})
		rc.mu.Unlock()
		if rc.respond != nil {
			rc.respond(n, w)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// checkEvent validates a delivered payload against the document's Event
// schema: the one schema of its type, chosen by the discriminator.
func checkEvent(t testing.TB, body []byte) {
	doc, _, err := th.LoadSpec()
	if err != nil {
		t.Errorf("openapi.json: %v", err)
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("delivered payload is not JSON: %s", body)
		return
	}
	if err := doc.Components.Schemas["Event"].Value.VisitJSON(v); err != nil {
		t.Errorf("delivered payload does not match its event schema: %v\n%s", err, body)
	}
}

func (rc *receiver) URL() string { return rc.srv.URL + "/hooks" }

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// verifyStandardWebhook checks a delivery the way a merchant would, written
// from the Standard Webhooks specification (not with the service's signer):
// the signed content is "{webhook-id}.{webhook-timestamp}.{body}", the key
// is the base64 part of the whsec_ secret, the signature HMAC-SHA256 in
// base64, and webhook-signature a space-separated list of "v1,<sig>".
// It also enforces the spec's five-minute timestamp tolerance around now.
func verifyStandardWebhook(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("webhook-timestamp is not an integer")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("webhook-timestamp outside the tolerance")
	}
	key, err := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := mac.Sum(nil)
	for _, vs := range strings.Split(sigs, " ") {
		version, sig, _ := strings.Cut(vs, ",")
		if version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no signature matches")
}
