package devrun

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/fundsource/fundsource/internal/webhook"
	"github.com/fundsource/fundsource/web"
)

const receiverUsage = `Usage:
  fundsource webhook-receiver --secret whsec_… [--listen 127.0.0.1:9000]
`

// Receiver is 'fundsource webhook-receiver', a development webhook endpoint: it verifies each delivery
// with the signing secret (webhook.Verify), prints one line per event and
// answers 200, or 401 for a delivery that does not verify.
func Receiver(ctx context.Context, args []string, io IO) error {
	fs := flag.NewFlagSet("fundsource webhook-receiver", flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	listen := fs.String("listen", "127.0.0.1:9000", "address to listen on")
	secret := fs.String("secret", io.Getenv("WEBHOOK_SECRET"), "signing secret (whsec_…); default $WEBHOOK_SECRET")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 || *secret == "" {
		fmt.Fprintf(io.Stderr, "fundsource webhook-receiver: give the signing secret\n\n%s", receiverUsage)
		return fmt.Errorf("%w: webhook-receiver needs --secret", ErrUsage)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *listen, err)
	}
	fmt.Fprintf(io.Stderr, "webhook receiver on http://%s/ — register it with POST /v2/webhooks {\"url\": \"http://%s/\"}\n",
		ln.Addr(), ln.Addr())
	return web.ServeUntil(ctx, ln, receiverHandler(*secret, io.Stdout, time.Now))
}

func receiverHandler(secret string, out io.Writer, now func() time.Time) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			err = webhook.Verify(secret, r.Header, body, now())
		}
		if err != nil {
			fmt.Fprintf(out, "REFUSED  %s  %v\n", r.Header.Get("webhook-id"), err)
			http.Error(w, "signature not valid", http.StatusUnauthorized)
			return
		}
		var ev struct {
			ID   string          `json:"id"`
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(body, &ev)
		fmt.Fprintf(out, "verified  %s  %-38s %s\n", ev.ID, ev.Type, ev.Data)
	})
}
