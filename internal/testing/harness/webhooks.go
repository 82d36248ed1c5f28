package harness

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Received is one request a test receiver got.
type Received struct {
	Header http.Header
	Body   []byte
}

// Payload decodes the body as an event envelope.
func (r Received) Payload(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("webhook body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Receiver is a webhook endpoint for tests: an HTTP server that records
// every request and checks each payload against the document's Event
// schema.
type Receiver struct {
	srv     *httptest.Server
	respond func(n int, w http.ResponseWriter)

	mu  sync.Mutex
	got []Received
}

// NewReceiver starts a receiver that the test's cleanup stops. respond
// answers each request, given its index n (the first request's is 0); a
// nil respond answers 200 "ok".
func NewReceiver(t testing.TB, respond func(n int, w http.ResponseWriter)) *Receiver {
	rc := &Receiver{respond: respond}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		checkEvent(t, body)
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, Received{Header: r.Header.Clone(), Body: body})
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
	doc, _, err := LoadSpec()
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

// URL is the endpoint's URL, to register as a webhook.
func (rc *Receiver) URL() string { return rc.srv.URL + "/hooks" }

// Port is the port the receiver listens on (on the loopback address).
func (rc *Receiver) Port() string {
	_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	return port
}

// Requests returns a copy of the requests received so far, in order.
func (rc *Receiver) Requests() []Received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Received(nil), rc.got...)
}

// RegisterWebhook sets the merchant's webhook URL through the API and
// returns the endpoint (with its secret).
func (h *Harness) RegisterWebhook(key, url string) map[string]any {
	h.T.Helper()
	return WantOK(h.T, h.Post("/v2/webhooks", key, `{"url":`+MustJSON(url)+`}`))
}

// Event returns GET /v2/events/{id}, with the event's deliveries.
func (h *Harness) Event(key, id string) map[string]any {
	h.T.Helper()
	return WantOK(h.T, h.Get("/v2/events/"+id, key))
}

// OnlyDelivery returns the only delivery of an event detail and fails the
// test when there is not exactly one.
func OnlyDelivery(t testing.TB, ev map[string]any) map[string]any {
	t.Helper()
	ds := ev["deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("deliveries = %d, want 1: %s", len(ds), MustJSON(ev))
	}
	return ds[0].(map[string]any)
}

// MustJSON encodes v as JSON, for messages and request bodies.
func MustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// VerifyStandardWebhook checks a delivery the way a merchant would, written
// from the Standard Webhooks specification (not with the service's signer):
// the signed content is "{webhook-id}.{webhook-timestamp}.{body}", the key
// is the base64 part of the whsec_ secret, the signature HMAC-SHA256 in
// base64, and webhook-signature a space-separated list of "v1,<sig>".
// It also enforces the spec's five-minute timestamp tolerance around now.
func VerifyStandardWebhook(secret string, h http.Header, body []byte, now time.Time) error {
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
	encoded, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return errors.New("the secret does not start with whsec_")
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
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
