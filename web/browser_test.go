package web_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Browser tests drive Debian's Chromium through playwright-go against the
// real engine on 127.0.0.1:0. The driver (playwright-core 1.52.0, which
// playwright-go v0.5200.1 needs) comes from `make browser`, or from
// PLAYWRIGHT_DRIVER_PATH; Chromium from CHROMIUM_PATH or Debian's package.
// A missing piece fails the test with what to install: browser tests are
// never skipped.

var (
	browserOnce sync.Once
	pw          *playwright.Playwright
	browser     playwright.Browser
	browserErr  error
)

// chromiumPaths are where Debian's chromium package puts the binary.
var chromiumPaths = []string{"/usr/lib/chromium/chromium", "/usr/bin/chromium"}

func driverDir() string {
	if d := os.Getenv("PLAYWRIGHT_DRIVER_PATH"); d != "" {
		return d
	}
	// The module root's .playwright/, where `make browser` installs it.
	dir, _ := os.Getwd()
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
	}
	return filepath.Join(dir, ".playwright", "driver-1.52.0")
}

func chromiumPath() (string, error) {
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p, nil
	}
	for _, p := range chromiumPaths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("Chromium is not installed: run `make browser` (Debian's chromium package) or set CHROMIUM_PATH")
}

// chromium starts the one browser of this test process.
func chromium(t testing.TB) playwright.Browser {
	t.Helper()
	browserOnce.Do(func() {
		exe, err := chromiumPath()
		if err != nil {
			browserErr = err
			return
		}
		pw, err = playwright.Run(&playwright.RunOptions{DriverDirectory: driverDir(), SkipInstallBrowsers: true, Verbose: false})
		if err != nil {
			browserErr = fmt.Errorf("playwright driver at %s: %w (run `make browser`)", driverDir(), err)
			return
		}
		browser, browserErr = pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
			ExecutablePath: playwright.String(exe),
			Headless:       playwright.Bool(true),
			Args: []string{"--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
				"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"},
		})
	})
	if browserErr != nil {
		t.Fatalf("browser: %v", browserErr)
	}
	return browser
}

// stopBrowser ends the browser and the driver after all tests.
func stopBrowser() {
	if browser != nil {
		_ = browser.Close()
	}
	if pw != nil {
		_ = pw.Stop()
	}
}

// tab is one page in a fresh browser context (no cookies shared), phone
// sized unless told otherwise. On failure it saves a screenshot.
type tab struct {
	t    testing.TB
	page playwright.Page
}

type tabOption func(*playwright.BrowserNewContextOptions)

func withoutJavaScript(o *playwright.BrowserNewContextOptions) {
	o.JavaScriptEnabled = playwright.Bool(false)
}

func newTab(t testing.TB, opts ...tabOption) *tab {
	t.Helper()
	o := playwright.BrowserNewContextOptions{
		Viewport: &playwright.Size{Width: 375, Height: 740}, // a phone
		Locale:   playwright.String("en-US"),
	}
	for _, f := range opts {
		f(&o)
	}
	ctx, err := chromium(t).NewContext(o)
	if err != nil {
		t.Fatalf("browser context: %v", err)
	}
	ctx.SetDefaultTimeout(10000)
	ctx.SetDefaultNavigationTimeout(10000)
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatalf("browser page: %v", err)
	}
	tb := &tab{t: t, page: page}
	t.Cleanup(func() {
		if t.Failed() {
			tb.screenshot(failureDir(), "")
		}
		_ = ctx.Close()
	})
	return tb
}

// failureDir is where failing browser tests leave screenshots.
func failureDir() string {
	if d := os.Getenv("SCREENSHOT_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "fundsource-screenshots")
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// screenshot saves the whole page as dir/<test>[-name].png and logs where.
func (tb *tab) screenshot(dir, name string) string {
	file := unsafeName.ReplaceAllString(tb.t.Name(), "_")
	if name != "" {
		file = name
	}
	path := filepath.Join(dir, file+".png")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Logf("screenshot: %v", err)
		return ""
	}
	if _, err := tb.page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(path), FullPage: playwright.Bool(true)}); err != nil {
		tb.t.Logf("screenshot: %v", err)
		return ""
	}
	tb.t.Logf("screenshot: %s", path)
	return path
}

// open opens url and returns the response status.
func (tb *tab) open(url string) int {
	tb.t.Helper()
	res, err := tb.page.Goto(url)
	if err != nil {
		tb.t.Fatalf("goto %s: %v", url, err)
	}
	if res == nil {
		return 0 // same-document navigation
	}
	return res.Status()
}

// text is the visible text of the first element matching selector.
func (tb *tab) text(selector string) string {
	tb.t.Helper()
	s, err := tb.page.Locator(selector).First().InnerText()
	if err != nil {
		tb.t.Fatalf("text of %s: %v", selector, err)
	}
	return s
}

// wantText fails unless the page's main text contains every string.
func (tb *tab) wantText(want ...string) {
	tb.t.Helper()
	body := tb.text("body")
	for _, w := range want {
		if !strings.Contains(body, w) {
			tb.t.Errorf("page %s lacks %q; it says:\n%s", tb.page.URL(), w, body)
		}
	}
}

// waitURL waits until the page's address matches re.
func (tb *tab) waitURL(re string) {
	tb.t.Helper()
	if err := tb.page.WaitForURL(regexp.MustCompile(re)); err != nil {
		tb.t.Fatalf("address never matched %s: now %s: %v", re, tb.page.URL(), err)
	}
}

// eval runs a JavaScript expression in the page.
func (tb *tab) eval(expr string) any {
	tb.t.Helper()
	v, err := tb.page.Evaluate(expr)
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// press types keys on the keyboard.
func (tb *tab) press(keys ...string) {
	tb.t.Helper()
	for _, k := range keys {
		if err := tb.page.Keyboard().Press(k); err != nil {
			tb.t.Fatalf("press %s: %v", k, err)
		}
	}
}

// live serves the harness's engine over real HTTP on 127.0.0.1:0.
func (h *harness) live() *httptest.Server {
	srv := httptest.NewServer(h.Engine)
	h.T.Cleanup(srv.Close)
	return srv
}

// shopSite is the merchant's own site: it records where customers arrive
// and serves pages the tests need.
type shopSite struct {
	srv   *httptest.Server
	mu    sync.Mutex
	paths []string // RequestURI of each visit
	pages map[string]string
}

func newShopSite(t testing.TB) *shopSite {
	s := &shopSite{pages: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.RequestURI())
		body, ok := s.pages[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			body = "<!doctype html><title>Shop</title><h1>Back at the shop</h1>"
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the shop's address on host ("127.0.0.1" or "localhost").
func (s *shopSite) URL(host string) string {
	return strings.Replace(s.srv.URL, "127.0.0.1", host, 1)
}

func (s *shopSite) visits() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}
