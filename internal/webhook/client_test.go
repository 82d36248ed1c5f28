package webhook

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The production client never follows a redirect, so a public endpoint
// cannot bounce a delivery to an internal address. The test's endpoint
// listens on loopback, so the dialer treats exactly its address as public
// and applies the real refusal to every other address.
func TestProductionClientDoesNotFollowARedirectToAnInternalAddress(t *testing.T) {
	for _, target := range []string{"http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://127.0.0.1:1/"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target, http.StatusTemporaryRedirect)
		}))
		c := NewClient(false)
		var mu sync.Mutex
		var dialled []string
		d := &net.Dialer{}
		c.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, addr)
			mu.Unlock()
			if addr != srv.Listener.Addr().String() {
				if err := refusePrivate(network, addr, nil); err != nil {
					return nil, err
				}
			}
			return d.DialContext(ctx, network, addr)
		}
		res, err := c.Post(srv.URL, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("redirect to %s: %v", target, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusTemporaryRedirect || len(dialled) != 1 {
			t.Errorf("redirect to %s: status %d, dialled %v; want the 307 itself and one dial", target, res.StatusCode, dialled)
		}
		srv.Close()
	}
}
