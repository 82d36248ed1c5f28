package webtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopBrowser()
	os.Exit(code)
}

// postBack is a page whose form posts and comes back to the same address,
// the answer held for a while, and whose text counts the posts.
func postBack(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			time.Sleep(300 * time.Millisecond) // a slow answer: the wait must outlast it
			mu.Lock()
			posts++
			mu.Unlock()
			http.Redirect(w, r, "/form", http.StatusSeeOther)
			return
		}
		mu.Lock()
		n := posts
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><title>Form</title><h1>Form</h1>
<p id="posts">%d</p><div id="box"><form method="post" action="/form"><button>Send</button></form></div>`, n)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestBrowserWaitURLWaitsForThePageAtTheSameAddress: a post that comes
// back to the address it was sent from is waited for by WaitURL and by
// Inside, so the text read next is the answer's.
func TestBrowserWaitURLWaitsForThePageAtTheSameAddress(t *testing.T) {
	srv := postBack(t)
	tb := NewTab(t, WithoutJavaScript)
	tb.Open(srv.URL + "/form")
	tb.WaitURL(`/form$`) // no action yet: the page that is open
	for want := 1; want <= 2; want++ {
		tb.Click("button", "Send")
		tb.WaitURL(`/form$`)
		if got, err := tb.Page.Locator("#posts").TextContent(); err != nil || got != fmt.Sprint(want) {
			tb.Errorf("after post %d the page says %q (%v)", want, got, err)
		}
	}
	tb.Inside("#box")
	if got, err := tb.Page.Locator("#posts").TextContent(); err != nil || got != "3" {
		tb.Errorf("after Inside the page says %q (%v), want 3", got, err)
	}
}
