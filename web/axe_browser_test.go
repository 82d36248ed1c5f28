package web_test

import (
	"fmt"

	"github.com/playwright-community/playwright-go"
	"os"
	"path/filepath"
	"sync"
)

// axe-core (installed by `make browser` beside the playwright driver)
// checks a page in Chromium; serious and critical violations fail.

var (
	axeOnce   sync.Once
	axeSource string
	axeErr    error
)

// axe runs axe-core on the page and fails the test on any serious or
// critical violation, naming the rule and the first elements.
func (tb *tab) axe() {
	tb.t.Helper()
	axeOnce.Do(func() {
		path := filepath.Join(nodeToolsDir(), "node_modules", "axe-core", "axe.min.js")
		b, err := os.ReadFile(path)
		if err != nil {
			axeErr = fmt.Errorf("axe-core is not installed at %s: run `make browser`", path)
			return
		}
		axeSource = string(b)
	})
	if axeErr != nil {
		tb.t.Fatal(axeErr)
	}
	// Evaluated through the DevTools protocol: the pages' CSP, which
	// forbids inline scripts, does not apply, and it works with page
	// JavaScript off.
	if _, err := tb.page.Evaluate(axeSource + "\n;true"); err != nil {
		tb.t.Fatalf("load axe-core: %v", err)
	}
	got, err := tb.page.Evaluate(`async () => {
		const r = await axe.run(document, { resultTypes: ['violations'] });
		return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
			.map(v => v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '));
	}`)
	if err != nil {
		tb.t.Fatalf("axe.run: %v", err)
	}
	if list, _ := got.([]any); len(list) > 0 {
		tb.t.Errorf("%s: axe-core finds %d serious or critical violations:\n%v", tb.page.URL(), len(list), list)
	}
}

// axeTwin is a tab with JavaScript on, signed in as tb is (its cookies),
// at tb's window size, for running axe-core on pages tb sees with
// JavaScript off (axe needs timers, which are off there).
func (tb *tab) axeTwin() *tab {
	tb.t.Helper()
	vp := tb.page.ViewportSize()
	twin := newTab(tb.t, withViewport(vp.Width, vp.Height))
	cookies, err := tb.page.Context().Cookies()
	if err != nil {
		tb.t.Fatal(err)
	}
	opts := make([]playwright.OptionalCookie, len(cookies))
	for i, c := range cookies {
		opts[i] = c.ToOptionalCookie()
	}
	if err := twin.page.Context().AddCookies(opts); err != nil {
		tb.t.Fatal(err)
	}
	return twin
}

// fitsWidth fails when the page scrolls sideways (wider than the window).
func (tb *tab) fitsWidth() {
	tb.t.Helper()
	if over := tb.eval(`document.documentElement.scrollWidth - window.innerWidth`); fmt.Sprint(over) != "0" {
		tb.t.Errorf("%s: the page is %v px wider than the window", tb.page.URL(), over)
	}
}
