package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/provider"
	"github.com/fundsource/fundsource/internal/dev/providersim"
)

// TestOwnerScoresThroughPlaidGo asks the simulator's
// /processor/identity/match through plaid-go for each documented band.
func TestOwnerScoresThroughPlaidGo(t *testing.T) {
	srv := httptest.NewServer(providersim.New(providersim.Config{
		Clients: map[string]string{"acme": "acme-secret", "svc": "svc-secret"}, ProcessorClientID: "svc",
	}).Handler())
	defer srv.Close()
	call := func(path string, body map[string]any) map[string]any {
		t.Helper()
		body["client_id"], body["secret"] = "acme", "acme-secret"
		raw, _ := json.Marshal(body)
		res, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		var out map[string]any
		if err := json.Unmarshal(data, &out); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, res.StatusCode, data)
		}
		return out
	}
	pub := call("/sandbox/public_token/create", map[string]any{"institution_id": "ins_109508", "initial_products": []string{"auth"}})
	access := call("/item/public_token/exchange", map[string]any{"public_token": pub["public_token"]})["access_token"]
	accounts := call("/accounts/get", map[string]any{"access_token": access})["accounts"].([]any)
	tok := call("/processor/token/create", map[string]any{"access_token": access,
		"account_id": accounts[0].(map[string]any)["account_id"], "processor": "service"})["processor_token"].(string)

	c := provider.New(srv.URL, "svc", "svc-secret", slog.New(slog.DiscardHandler))
	for _, tc := range []struct {
		name, email           string
		nameScore, emailScore int
	}{
		{"Alberta Charleson", "accountholder0@example.com", 90, 100},
		{"Alberta Smith", "", 60, -1},
		{"Jordan Doe", "jordan@example.com", 20, 0},
	} {
		sc, err := c.OwnerScores(context.Background(), tok, tc.name, tc.email)
		if err != nil || sc.Name != tc.nameScore || sc.Email != tc.emailScore {
			t.Errorf("%s <%s>: %+v, %v; want %d, %d", tc.name, tc.email, sc, err, tc.nameScore, tc.emailScore)
		}
	}
	if _, err := c.OwnerScores(context.Background(), "processor-sandbox-nope", "Alberta Charleson", ""); err == nil {
		t.Error("an unknown token scored")
	}
}
