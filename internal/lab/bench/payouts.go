package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/lab/loadgen"
)

// InstantPayouts times n instant credits one after another, each from
// its POST /v2/payments (method "instant": the server's pacs.008 to the
// rail and the pacs.002 back) until GET shows it processed, through the
// API at base with the secret key. Its sources, at the sandbox's RTP bank,
// are created first, untimed, for customerID. One at a time, a credit's
// time is what the merchant waits, not a queue behind other loads. run
// (0 to 9) keeps each run's account numbers apart.
func InstantPayouts(ctx context.Context, client *http.Client, base, key, customerID string, run, n int) (loadgen.Result, error) {
	api := payoutAPI{client: client, base: base, key: key}
	ids := make([]string, n)
	for i := range ids {
		var src struct {
			ID string `json:"funding_source_id"`
		}
		body := fmt.Sprintf(`{"user_id":%q,"routing_number":"110000000","account_number":"91%d%09d"}`, customerID, run, i)
		if err := api.do(ctx, http.MethodPost, "/v2/funding-source", body, &src); err != nil {
			return loadgen.Result{}, err
		}
		ids[i] = src.ID
	}
	name := fmt.Sprintf("instant payout to processed (%d, one at a time)", n)
	return loadgen.Sequence(ctx, name, n, func(ctx context.Context, i int) error {
		var p struct {
			ID     string `json:"payment_id"`
			Status string `json:"status"`
			Rail   string `json:"rail"`
		}
		body := `{"funding_source_id":"` + ids[i] + `","amount":"12.34","direction":"credit","method":"instant"}`
		if err := api.do(ctx, http.MethodPost, "/v2/payments", body, &p); err != nil {
			return err
		}
		if p.Rail != "rtp" {
			return fmt.Errorf("payout %s went on %q, not rtp", p.ID, p.Rail)
		}
		// An accepted credit is processed in its creation's answer; one
		// the rail has not answered yet is read until it is.
		deadline := time.Now().Add(10 * time.Second)
		for p.Status == "pending" && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			if err := api.do(ctx, http.MethodGet, "/v2/payments/"+p.ID, "", &p); err != nil {
				return err
			}
		}
		if p.Status != "processed" {
			return fmt.Errorf("payout %s is %s, not processed", p.ID, p.Status)
		}
		return nil
	}), nil
}

type payoutAPI struct {
	client    *http.Client
	base, key string
}

// do sends one request and decodes its 200 answer into into.
func (a payoutAPI) do(ctx context.Context, method, path, body string, into any) error {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d: %.300s", method, path, resp.StatusCode, data)
	}
	return json.Unmarshal(data, into)
}
