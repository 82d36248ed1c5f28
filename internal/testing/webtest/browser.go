package webtest

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

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

// Browser tests drive Debian's Chromium through playwright-go against the
// real engine on 127.0.0.1:0. The driver (playwright-core 1.52.0, which
// playwright-go v0.5200.1 needs) comes from `make browser`, or from
// PLAYWRIGHT_DRIVER_PATH; Chromium from CHROMIUM_PATH or Debian's package.
// A missing piece fails the test with what to install: browser tests are
// never skipped.

// StopBrowser ends the browser and the driver after all tests; a test
// package that opens tabs passes it to pgtest.Main from its TestMain.
func StopBrowser() {
	if browser != nil {
		_ = browser.Close()
	}
	if pw != nil {
		_ = pw.Stop()
	}
}

// Tab is one page in a fresh browser context (no cookies shared), phone
// sized unless told otherwise. On failure it saves a screenshot.
type Tab struct {
	t    testing.TB
	Page playwright.Page
	shot bool // a failure's screenshot was taken

	mu    sync.Mutex
	docs  int           // documents the main frame has committed; guarded by mu
	next  chan struct{} // closed when the main frame commits the next one; guarded by mu
	acted int           // docs when the last click, key press or choice began; -1 before any
}

// expect retries a locator's assertion until it holds or the tab's
// timeout passes: a test waits for a state, never for a time.
var expect = playwright.NewPlaywrightAssertions(waitMillis)

// waitMillis bounds every wait of a tab: navigation, actions, assertions.
const waitMillis = 10000

// TabOption changes the browser context a Tab opens in.
type TabOption func(*playwright.BrowserNewContextOptions)

// WithoutJavaScript opens the tab with JavaScript off, as the pages must work without it.
func WithoutJavaScript(o *playwright.BrowserNewContextOptions) {
	o.JavaScriptEnabled = playwright.Bool(false)
}

// NewTab opens a Tab; it closes when the test ends, after a screenshot if the test failed.
func NewTab(t testing.TB, opts ...TabOption) *Tab {
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
	ctx.SetDefaultTimeout(waitMillis)
	ctx.SetDefaultNavigationTimeout(waitMillis)
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatalf("browser page: %v", err)
	}
	tb := &Tab{t: t, Page: page, next: make(chan struct{}), acted: -1}
	// Counting the main frame's navigations lets a wait tell the page an
	// action leads to from the one it was taken on, even at the same address.
	page.OnFrameNavigated(func(f playwright.Frame) {
		if f.ParentFrame() != nil {
			return
		}
		tb.mu.Lock()
		tb.docs++
		close(tb.next)
		tb.next = make(chan struct{})
		tb.mu.Unlock()
	})
	t.Cleanup(func() {
		if t.Failed() && !tb.shot {
			tb.failureShot()
		}
		_ = ctx.Close()
	})
	return tb
}

// failureShot saves the page as it is when an assertion fails, in
// SCREENSHOT_DIR or a folder of the test's own (kept after the test, its
// path logged), so parallel tests and runs never overwrite each other's.
func (tb *Tab) failureShot() {
	tb.shot = true
	dir := os.Getenv("SCREENSHOT_DIR")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "fundsource-"+unsafeName.ReplaceAllString(tb.t.Name(), "_")+"-"); err != nil {
			tb.t.Logf("screenshot: %v", err)
			return
		}
	}
	tb.Screenshot(dir, "")
}

// Errorf fails the test after a screenshot of the page (the first failure's).
func (tb *Tab) Errorf(format string, args ...any) {
	tb.t.Helper()
	if !tb.shot {
		tb.failureShot()
	}
	tb.t.Errorf(format, args...)
}

// Fatalf fails and stops the test after a screenshot of the page.
func (tb *Tab) Fatalf(format string, args ...any) {
	tb.t.Helper()
	if !tb.shot {
		tb.failureShot()
	}
	tb.t.Fatalf(format, args...)
}

// Error fails the test after a screenshot of the page (the first failure's).
func (tb *Tab) Error(args ...any) {
	tb.t.Helper()
	if !tb.shot {
		tb.failureShot()
	}
	tb.t.Error(args...)
}

// Fatal fails and stops the test after a screenshot of the page.
func (tb *Tab) Fatal(args ...any) {
	tb.t.Helper()
	if !tb.shot {
		tb.failureShot()
	}
	tb.t.Fatal(args...)
}

// WantFocus waits until the element matching selector has the focus.
func (tb *Tab) WantFocus(selector string) {
	tb.t.Helper()
	if err := expect.Locator(tb.Page.Locator(selector)).ToBeFocused(); err != nil {
		id := tb.Eval(`document.activeElement ? document.activeElement.id : ""`)
		tb.Errorf("the focus is on %q, want %s: %v", id, selector, err)
	}
}

// WantVisible waits until the first element matching selector is shown.
func (tb *Tab) WantVisible(selector string) {
	tb.t.Helper()
	if err := tb.Page.Locator(selector).First().WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}); err != nil {
		tb.Fatalf("%s never became visible: %v", selector, err)
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Screenshot saves the whole page as dir/<test>[-name].png and logs where.
func (tb *Tab) Screenshot(dir, name string) string {
	file := unsafeName.ReplaceAllString(tb.t.Name(), "_")
	if name != "" {
		file = name
	}
	path := filepath.Join(dir, file+".png")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Logf("screenshot: %v", err)
		return ""
	}
	if _, err := tb.Page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(path), FullPage: playwright.Bool(true)}); err != nil {
		tb.t.Logf("screenshot: %v", err)
		return ""
	}
	tb.t.Logf("screenshot: %s", path)
	return path
}

// Open opens url and returns the response status.
func (tb *Tab) Open(url string) int {
	tb.t.Helper()
	res, err := tb.Page.Goto(url)
	if err != nil {
		tb.Fatalf("goto %s: %v", url, err)
	}
	if res == nil {
		return 0 // same-document navigation
	}
	return res.Status()
}

// Text is the visible text of the first element matching selector.
func (tb *Tab) Text(selector string) string {
	tb.t.Helper()
	s, err := tb.Page.Locator(selector).First().InnerText()
	if err != nil {
		tb.Fatalf("text of %s: %v", selector, err)
	}
	return s
}

// WantText waits until the page's text contains every string, and fails
// if one never appears.
func (tb *Tab) WantText(want ...string) {
	tb.t.Helper()
	body := tb.Page.Locator("body")
	for _, w := range want {
		if err := expect.Locator(body).ToContainText(w, playwright.LocatorAssertionsToContainTextOptions{UseInnerText: playwright.Bool(true)}); err != nil {
			text, _ := body.InnerText()
			tb.Errorf("page %s lacks %q; it says:\n%s", tb.Page.URL(), w, text)
		}
	}
}

// Eval runs a JavaScript expression in the page.
func (tb *Tab) Eval(expr string) any {
	tb.t.Helper()
	v, err := tb.Page.Evaluate(expr)
	if err != nil {
		tb.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// ImageWidth waits until the image matching selector has finished
// loading (or failing to) and returns its natural width: 0 for an image
// the browser could not decode. It polls with Evaluate, which the pages'
// Content-Security-Policy allows; Playwright's WaitForFunction evaluates
// a string in the page, which script-src 'self' refuses.
func (tb *Tab) ImageWidth(selector string) int {
	tb.t.Helper()
	const width = `s => { const i = document.querySelector(s); return i !== null && i.complete ? i.naturalWidth : -1 }`
	for deadline := time.Now().Add(waitMillis * time.Millisecond); ; {
		v, err := tb.Page.Evaluate(width, selector)
		if err != nil {
			tb.Fatalf("width of image %s: %v", selector, err)
		}
		var w int
		switch n := v.(type) {
		case int:
			w = n
		case float64:
			w = int(n)
		default:
			tb.Fatalf("width of image %s: %v is not a number", selector, v)
		}
		if w >= 0 {
			return w
		}
		if time.Now().After(deadline) {
			tb.Fatalf("image %s never finished loading", selector)
		}
		time.Sleep(20 * time.Millisecond) // the next look at the image's state
	}
}

// Live serves the harness's engine over real HTTP on 127.0.0.1:0.
func (h *Harness) Live() *httptest.Server {
	srv := httptest.NewServer(h.Engine)
	h.T.Cleanup(srv.Close)
	return srv
}

// ShopSite is the merchant's own site: it records where customers arrive
// and serves pages the tests need.
type ShopSite struct {
	srv   *httptest.Server
	mu    sync.Mutex
	paths []string // RequestURI of each visit
	Pages map[string]string
}

// NewShopSite starts the merchant's site for the test.
func NewShopSite(t testing.TB) *ShopSite {
	s := &ShopSite{Pages: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.RequestURI())
		body, ok := s.Pages[r.URL.Path]
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
func (s *ShopSite) URL(host string) string {
	return strings.Replace(s.srv.URL, "127.0.0.1", host, 1)
}

// visits are the RequestURIs of the visits so far.
func (s *ShopSite) visits() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

var (
	axeOnce   sync.Once
	axeSource string
	axeErr    error
)

// Axe runs axe-core on the page and fails the test on any serious or
// critical violation, naming the rule and the first elements.
func (tb *Tab) Axe() {
	tb.t.Helper()
	axeOnce.Do(func() {
		path := filepath.Join(NodeToolsDir(), "node_modules", "axe-core", "axe.min.js")
		b, err := os.ReadFile(path)
		if err != nil {
			axeErr = fmt.Errorf("axe-core is not installed at %s: run `make browser`", path)
			return
		}
		axeSource = string(b)
	})
	if axeErr != nil {
		tb.Fatalf("%v", axeErr)
	}
	// Evaluated through the DevTools protocol: the pages' CSP, which
	// forbids inline scripts, does not apply, and it works with page
	// JavaScript off.
	if _, err := tb.Page.Evaluate(axeSource + "\n;true"); err != nil {
		tb.Fatalf("load axe-core: %v", err)
	}
	got, err := tb.Page.Evaluate(`async () => {
		const r = await axe.run(document, { resultTypes: ['violations'] });
		return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
			.map(v => v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '));
	}`)
	if err != nil {
		tb.Fatalf("axe.run: %v", err)
	}
	if list, _ := got.([]any); len(list) > 0 {
		tb.Errorf("%s: axe-core finds %d serious or critical violations:\n%v", tb.Page.URL(), len(list), list)
	}
}

// AxeTwin is a tab with JavaScript on, signed in as tb is (its cookies),
// at tb's window size, for running axe-core on pages tb sees with
// JavaScript off (axe needs timers, which are off there).
func (tb *Tab) AxeTwin() *Tab {
	tb.t.Helper()
	vp := tb.Page.ViewportSize()
	twin := NewTab(tb.t, WithViewport(vp.Width, vp.Height))
	cookies, err := tb.Page.Context().Cookies()
	if err != nil {
		tb.t.Fatal(err)
	}
	opts := make([]playwright.OptionalCookie, len(cookies))
	for i, c := range cookies {
		opts[i] = c.ToOptionalCookie()
	}
	if err := twin.Page.Context().AddCookies(opts); err != nil {
		tb.t.Fatal(err)
	}
	return twin
}

// PageChecks returns a check of the page a tab without JavaScript shows
// when it is called: its names and labels (Accessible), its width
// (FitsWidth), and axe-core, which needs timers, run on the same address
// by a twin tab signed in as tb (AxeTwin).
func (tb *Tab) PageChecks() func() {
	tb.t.Helper()
	twin := tb.AxeTwin()
	return func() {
		tb.t.Helper()
		tb.Accessible()
		tb.FitsWidth()
		twin.Open(tb.Page.URL())
		twin.Axe()
	}
}

// FitsWidth fails when the page scrolls sideways (wider than the window).
func (tb *Tab) FitsWidth() {
	tb.t.Helper()
	if over := tb.Eval(`document.documentElement.scrollWidth - window.innerWidth`); fmt.Sprint(over) != "0" {
		tb.Errorf("%s: the page is %v px wider than the window", tb.Page.URL(), over)
	}
}

// WithViewport sizes the tab's window in CSS pixels.
func WithViewport(w, h int) TabOption {
	return func(o *playwright.BrowserNewContextOptions) { o.Viewport = &playwright.Size{Width: w, Height: h} }
}

// Value is the value of the input matching selector.
func (tb *Tab) Value(selector string) string {
	tb.t.Helper()
	v, err := tb.Page.Locator(selector).InputValue()
	if err != nil {
		tb.Fatalf("value of %s: %v", selector, err)
	}
	return v
}

// AcceptDialogs answers every confirm() with OK.
func (tb *Tab) AcceptDialogs() {
	tb.Page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
}

// Shot saves a screenshot as dir/name.png when dir is set (make screenshots).
func (tb *Tab) Shot(dir, name string) {
	if dir != "" {
		tb.Screenshot(dir, name)
	}
}

// Accessible fails on form controls without a label, a page without one
// h1 or a language.
func (tb *Tab) Accessible() {
	tb.t.Helper()
	unlabelled := tb.Eval(`[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
		.filter(e => e.labels.length === 0 && !e.getAttribute('aria-label')).map(e => e.id || e.name).join(',')`)
	if unlabelled != "" {
		tb.Errorf("%s: controls without a label: %v", tb.Page.URL(), unlabelled)
	}
	if n := tb.Eval(`document.querySelectorAll('h1').length`); n != 1 {
		tb.Errorf("%s: %v h1 elements", tb.Page.URL(), n)
	}
	if lang := tb.Eval(`document.documentElement.lang`); lang != "en" {
		tb.Errorf("%s: lang = %v", tb.Page.URL(), lang)
	}
}

// InsideCards fails for every table and select of the page whose box
// passes the right or left edge of its card (the table's scrolling
// region, or the card or section around a select), and for a payment id
// link that wraps onto more than two lines.
func (tb *Tab) InsideCards() {
	tb.t.Helper()
	for _, sel := range []string{"main table", "main select"} {
		all, err := tb.Page.Locator(sel).All()
		if err != nil {
			tb.t.Fatal(err)
		}
		for i, el := range all {
			if visible, _ := el.IsVisible(); !visible {
				continue // a chart's table for screen readers, a closed section
			}
			card := el.Locator(`xpath=ancestor::*[contains(concat(' ', @class, ' '), ' table-wrap ') or contains(concat(' ', @class, ' '), ' card ') or self::section or self::main][1]`)
			box, err := el.BoundingBox()
			if err != nil || box == nil {
				tb.Fatalf("%s #%d: no box (%v)", sel, i, err)
			}
			cb, err := card.BoundingBox()
			if err != nil || cb == nil {
				tb.Fatalf("%s #%d: no card box (%v)", sel, i, err)
			}
			if box.X < cb.X-0.5 || box.X+box.Width > cb.X+cb.Width+0.5 {
				id, _ := el.GetAttribute("id")
				tb.Errorf("%s: %s #%d (%s) spans %.0f–%.0f px, its card %.0f–%.0f px", tb.Page.URL(), sel, i, id,
					box.X, box.X+box.Width, cb.X, cb.X+cb.Width)
			}
		}
	}
	lines := tb.Eval(`Math.max(0, ...[...document.querySelectorAll('main a[href*="/dashboard/payments/pay_"]')].map(a => a.getClientRects().length))`)
	if n, _ := lines.(int); n > 2 {
		tb.Errorf("%s: a payment id wraps onto %d lines", tb.Page.URL(), n)
	}
}

// Capture takes a screenshot (the whole page when full) and decodes it.
func (tb *Tab) Capture(full bool) image.Image {
	tb.t.Helper()
	b, err := tb.Page.Screenshot(playwright.PageScreenshotOptions{FullPage: playwright.Bool(full)})
	if err != nil {
		tb.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		tb.Fatalf("decode the screenshot: %v", err)
	}
	return img
}

// Box is the bounding box of the first element matching selector.
func (tb *Tab) Box(selector string) playwright.Rect {
	tb.t.Helper()
	r, err := tb.Page.Locator(selector).First().BoundingBox()
	if err != nil || r == nil {
		tb.Fatalf("box of %s: %v", selector, err)
	}
	return *r
}

// NodeToolsDir is where `make browser` installs axe-core, openapi-typescript
// and tsc: NODE_TOOLS_PATH, or the module root's .playwright/node-tools.
func NodeToolsDir() string {
	if d := os.Getenv("NODE_TOOLS_PATH"); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(driverDir()), "node-tools")
}
