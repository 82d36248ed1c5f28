package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// TestErrorMapping sends real-Plaid-shaped errors — the HTTP status,
// error_type and error_code Plaid documents for each — and a proxy's HTML
// 502 and a timeout through the plaid-go client, and checks what the
// merchant gets: a 4xx with its reason, 502 provider_unavailable with
// Retry-After, or a 502 for the operator that asks for no retry.
func TestErrorMapping(t *testing.T) {
	const (
		refused  = "refused"  // 4xx with a reason; nothing to retry until something changes
		retry    = "retry"    // 502 provider_unavailable with Retry-After
		operator = "operator" // 502 without Retry-After, logged at error level
	)
	rows := []struct {
		status     int
		typ, code  string
		kind       string
		want       errs.Code
		wantInText string
	}{
		{400, "INVALID_INPUT", "INVALID_PROCESSOR_TOKEN", refused, errs.InvalidProcessorToken, "invalid, expired or revoked"},
		{400, "ITEM_ERROR", "ITEM_LOGIN_REQUIRED", refused, errs.InvalidProcessorToken, "re-authenticate"},
		{400, "ITEM_ERROR", "ITEM_NOT_FOUND", refused, errs.InvalidProcessorToken, "removed"},
		{400, "ITEM_ERROR", "ACCESS_NOT_GRANTED", refused, errs.InvalidProcessorToken, "did not share"},
		{400, "ITEM_ERROR", "NO_AUTH_ACCOUNTS", refused, errs.InvalidAccountType, "checking or savings"},
		{400, "ITEM_ERROR", "PRODUCT_NOT_READY", retry, errs.ProviderUnavailable, "not finished verifying"},
		{400, "INVALID_INPUT", "INVALID_PRODUCT", refused, errs.ProcessorNotEnabled, "not enabled"},
		{400, "INSTITUTION_ERROR", "INSTITUTION_DOWN", retry, errs.ProviderUnavailable, "bank is down"},
		{400, "INSTITUTION_ERROR", "INSTITUTION_NOT_RESPONDING", retry, errs.ProviderUnavailable, "not responding"},
		{400, "INSTITUTION_ERROR", "INSTITUTION_NOT_AVAILABLE", retry, errs.ProviderUnavailable, "not available"},
		{400, "INSTITUTION_ERROR", "INSTITUTION_NO_LONGER_SUPPORTED", refused, errs.InvalidProcessorToken, "no longer supported"},
		{429, "RATE_LIMIT_EXCEEDED", "RATE_LIMIT_EXCEEDED", retry, errs.ProviderUnavailable, "limiting"},
		{400, "INVALID_INPUT", "INVALID_API_KEYS", operator, errs.ProviderUnavailable, "own credentials"},
		{503, "API_ERROR", "PLANNED_MAINTENANCE", retry, errs.ProviderUnavailable, "maintenance"},
		{500, "API_ERROR", "INTERNAL_SERVER_ERROR", retry, errs.ProviderUnavailable, "internal error"},
		{400, "INVALID_REQUEST", "SOMETHING_NEW", retry, errs.ProviderUnavailable, "SOMETHING_NEW"},
		{502, "", "html", retry, errs.ProviderUnavailable, "did not answer"},
		{0, "", "timeout", retry, errs.ProviderUnavailable, "did not answer"},
	}
	for _, row := range rows {
		t.Run(row.code, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch row.code {
				case "timeout":
					// The request's context ends with the client's connection
					// once the body has been read.
					io.Copy(io.Discard, r.Body)
					select {
					case <-r.Context().Done():
					case <-time.After(5 * time.Second):
					}
					return
				case "html":
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(http.StatusBadGateway)
					w.Write([]byte("<html><body><h1>502 Bad Gateway</h1></body></html>"))
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(row.status)
				json.NewEncoder(w).Encode(map[string]any{"error_type": row.typ, "error_code": row.code,
					"error_message": "as Plaid says it", "display_message": nil, "request_id": "req123"})
			}))
			defer srv.Close()
			var logs bytes.Buffer
			c := New(srv.URL, "service", "secret", slog.New(slog.NewJSONHandler(&logs, nil))).WithTimeout(200 * time.Millisecond)
			_, err := c.Account(context.Background(), "processor-sandbox-123")
			e, ok := errs.As(err)
			if !ok || e.Code != row.want || !strings.Contains(e.Message, row.wantInText) {
				t.Fatalf("%v, want %s mentioning %q", err, row.want, row.wantInText)
			}
			ra, hasRetry := e.Details["retry_after"].(string)
			switch row.kind {
			case retry:
				if n, err := strconv.Atoi(ra); !hasRetry || err != nil || n < 1 || !strings.Contains(e.Message, "retry") {
					t.Errorf("retry row without a Retry-After or the word: %+v", e)
				}
			case refused, operator:
				if hasRetry {
					t.Errorf("%s row asks for a retry: %+v", row.kind, e)
				}
			}
			if row.kind == operator {
				if strings.Contains(strings.ToLower(e.Message), "retry") || !strings.Contains(logs.String(), `"level":"ERROR"`) {
					t.Errorf("operator row: message %q, logs %s", e.Message, logs.String())
				}
			}
			if strings.Contains(logs.String(), "processor-sandbox-123") {
				t.Errorf("the token reached the logs: %s", logs.String())
			}
		})
	}
}

// TestEveryRuleIsDecided: every code of the table has an outcome and, for
// the token's refusals, a reason.
func TestEveryRuleIsDecided(t *testing.T) {
	for code, r := range rules {
		if out, ok := Rule(code); !ok || out != r.outcome {
			t.Errorf("%s: Rule = %v, %v", code, out, ok)
		}
		if (r.outcome == TokenRefused || r.outcome == RetryLater) && r.why == "" {
			t.Errorf("%s: no reason for the merchant", code)
		}
	}
}
