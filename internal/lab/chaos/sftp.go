package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/adapter/sftp"
	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/originator"
	"github.com/fundsource/fundsource/internal/testing/sftptest"
)

// sftpDown is the bank's SFTP server (a real sshd) stopped through an
// origination window: production debits made through a server process
// wait; two originators (as two processes) run the window at once and
// fail to deliver, which leaves the file built and failed; once the
// server is back the next runs deliver it. The server's outbound/ must
// then hold one file carrying every debit once.
func (c *chaos) sftpDown(ctx context.Context) (chaosResult, error) {
	bank, err := sftptest.Start(filepath.Join(c.run.Dir, "sftp"))
	if err != nil {
		return chaosResult{}, err
	}
	defer bank.Stop()
	cfg, err := sftp.ParseURL(bank.URL())
	if err != nil {
		return chaosResult{}, err
	}
	cfg.KeyFile, cfg.KnownHosts, cfg.Timeout = bank.KeyFile, bank.KnownHosts, 5*time.Second
	var originators []*ach.Originator
	for range 2 {
		client, err := sftp.New(cfg)
		if err != nil {
			return chaosResult{}, err
		}
		defer client.Close()
		o := ach.NewOriginator(ach.Config{Dir: filepath.Join(c.run.Dir, "unused-outbox"), ODFIRouting: "121042882",
			DestinationRouting: "231380104", DestinationName: "Federal Reserve Bank", OriginName: "Chaos Bank",
			CompanyName: "CHAOS", CompanyID: "1234567890"}, c.svc.DB.ACH(), c.svc.Funding, c.svc.Payments, c.svc.Consequences, time.Now)
		originators = append(originators, o.WithTransport(sftp.Transport{Client: client}))
	}

	srv, addr, err := c.server(ctx)
	if err != nil {
		return chaosResult{}, err
	}
	defer srv.Stop()
	m, err := c.svc.Merchants.Create(ctx, "SFTP Down", "sftp-down@chaos.test", "chaos-password-123")
	if err != nil {
		return chaosResult{}, err
	}
	keys, err := c.svc.Merchants.ActivateProduction(ctx, m.Merchant.ID, audit.Operator("chaos"))
	if err != nil {
		return chaosResult{}, err
	}
	scope := tenant.Scope{MerchantID: m.Merchant.ID, Env: tenant.Production}
	// A production originator waits for an operator's review and the
	// bank's company id.
	companyID := "1555000001"
	if _, err := c.svc.Originators.Set(ctx, scope, originator.Change{CompanyID: &companyID}, audit.Operator("chaos")); err != nil {
		return chaosResult{}, err
	}
	if _, err := c.svc.Originators.Activate(ctx, scope, audit.Operator("chaos")); err != nil {
		return chaosResult{}, err
	}
	if err := c.svc.Merchants.GrantOnDemand(ctx, scope, audit.Operator("chaos")); err != nil {
		return chaosResult{}, err
	}
	// Sources the merchant verified itself, so debits may go at once.
	if err := c.svc.Merchants.EnableThirdPartyVerification(ctx, scope, audit.Operator("chaos")); err != nil {
		return chaosResult{}, err
	}
	api := func(path, body string) (map[string]any, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keys.SecretKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := c.client.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("POST %s: %d %v", path, res.StatusCode, out)
		}
		return out, nil
	}
	cu, err := api("/v2/customers", `{"first_name":"Chaos","last_name":"Monkey","email":"sftp@example.com"}`)
	if err != nil {
		return chaosResult{}, err
	}
	const debits = 20
	want := map[int]bool{} // amounts in cents, one per debit
	stamp := time.Now().UnixNano() % 1_000_000
	for i := range debits {
		src, err := api("/v2/on-demand/funding-source", fmt.Sprintf(`{"user_id":%q,"routing_number":"021000021","account_number":"8%06d%03d"}`,
			cu["user_id"], stamp, i))
		if err != nil {
			return chaosResult{}, err
		}
		cents := 1000 + i
		_, err = api("/v2/payments", fmt.Sprintf(`{"funding_source_id":%q,"amount":"%d.%02d","direction":"debit","authorization":`+
			`{"accepted_at":"2026-01-01T00:00:00Z","ip_address":"203.0.113.7","user_agent":"chaos","text":"I authorize a debit."}}`,
			src["funding_source_id"], cents/100, cents%100))
		if err != nil {
			return chaosResult{}, err
		}
		want[cents] = true
	}

	window := func() (delivered int, failed int) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, o := range originators {
			wg.Go(func() {
				names, err := o.Run(ctx)
				mu.Lock()
				defer mu.Unlock()
				delivered += len(names)
				if err != nil {
					failed++
				}
			})
		}
		wg.Wait()
		return delivered, failed
	}
	bank.Stop()
	if d, f := window(); d != 0 || f == 0 {
		return chaosResult{}, fmt.Errorf("with the SFTP server down: %d delivered, %d runs failed", d, f)
	}
	if err := bank.Restart(); err != nil {
		return chaosResult{}, err
	}
	delivered := 0
	for range 2 { // the next window, and one after it that finds nothing
		d, f := window()
		if f != 0 {
			return chaosResult{}, errors.New("a run failed with the SFTP server back")
		}
		delivered += d
	}
	found, dup, err := c.outbound(bank.Root, want)
	if err != nil {
		return chaosResult{}, err
	}
	r := chaosResult{Sent: debits, Acknowledged: debits, Found: found, Lost: debits - found, Duplicated: dup,
		Notes: fmt.Sprintf("sshd stopped through a window: %d file(s) delivered once it was back", delivered)}
	if delivered != 1 {
		r.Failure = fmt.Sprintf("%d deliveries, want 1", delivered)
	}
	return r, nil
}

// outbound counts, in every file of the server's outbound/, the debits
// of want found (once) and the repeats.
func (c *chaos) outbound(root string, want map[int]bool) (found, dup int, err error) {
	names, err := filepath.Glob(filepath.Join(root, "outbound", "*"))
	if err != nil {
		return 0, 0, err
	}
	seen := map[int]int{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return 0, 0, err
		}
		f, err := nacha.NewReader(bytes.NewReader(data)).Read()
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", n, err)
		}
		for _, b := range f.Batches {
			for _, e := range b.GetEntries() {
				if want[e.Amount] {
					seen[e.Amount]++
				}
			}
		}
	}
	for _, n := range seen {
		found++
		dup += n - 1
	}
	return found, dup, nil
}
