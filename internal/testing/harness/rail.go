package harness

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/rail/railsim"
)

// UnreadableRail serves sim over HTTP behind a proxy that, while the flag
// it returns is set, rewrites the rail's status reports to a version the
// service cannot read (pacs.002.001.13): the rail took the credit and its
// answer is lost. A report it should rewrite that is not a pacs.002.001.10
// fails t, so the rewrite cannot silently stop applying. The server stops
// with the test.
func UnreadableRail(t testing.TB, sim *railsim.Sim) (url string, unreadable *atomic.Bool) {
	t.Helper()
	unreadable = new(atomic.Bool)
	sh := sim.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		sh.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if unreadable.Load() && rec.Code == http.StatusOK {
			rewritten := bytes.Replace(body, []byte("pacs.002.001.10"), []byte("pacs.002.001.13"), 1)
			if bytes.Equal(rewritten, body) {
				t.Errorf("the rail simulator's report is not a pacs.002.001.10: %s", body)
			}
			body = rewritten
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, unreadable
}
