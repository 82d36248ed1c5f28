package webtest

import (
	"regexp"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Actions that may lead to another page, and the waits after them: the
// tab counts the documents its main frame commits (NewTab), an action
// marks the count where it began, and a wait asks for a document after
// that mark, so a page is never taken for the one it replaces.

// act marks the start of an action that may lead to another page.
func (tb *Tab) act() {
	tb.mu.Lock()
	tb.acted = tb.docs
	tb.mu.Unlock()
}

// waitLeft waits until the main frame commits a document after the last
// action's start, and reports whether it did within the tab's timeout.
func (tb *Tab) waitLeft() bool {
	timeout := time.NewTimer(waitMillis * time.Millisecond)
	defer timeout.Stop()
	for {
		tb.mu.Lock()
		left, next := tb.docs > tb.acted, tb.next
		tb.mu.Unlock()
		if left {
			return true
		}
		select {
		case <-next:
		case <-timeout.C:
			return false
		}
	}
}

// WaitURL waits until the page's address matches re on a document
// committed after the last action (Click, ClickOn, Inside, Press, Choose)
// began: a form that posts and comes back to the same address is waited
// for, not the page it was sent from. The navigation is committed (the
// locators that read the page wait for what they read), so a load event
// that fired before the wait began is not waited for.
func (tb *Tab) WaitURL(re string) {
	tb.t.Helper()
	rx := regexp.MustCompile(re)
	tb.mu.Lock()
	stay := tb.acted >= 0 && tb.docs == tb.acted
	tb.mu.Unlock()
	if stay && rx.MatchString(tb.Page.URL()) && !tb.waitLeft() {
		tb.Fatalf("no page followed the last action: still %s", tb.Page.URL())
	}
	if err := tb.Page.WaitForURL(rx, playwright.PageWaitForURLOptions{WaitUntil: playwright.WaitUntilStateCommit}); err != nil {
		tb.Fatalf("address never matched %s: now %s: %v", re, tb.Page.URL(), err)
	}
}

// Press types keys on the keyboard.
func (tb *Tab) Press(keys ...string) {
	tb.t.Helper()
	tb.act()
	for _, k := range keys {
		if err := tb.Page.Keyboard().Press(k); err != nil {
			tb.Fatalf("press %s: %v", k, err)
		}
	}
}

// Fill types value into the input labelled label.
func (tb *Tab) Fill(label, value string) {
	tb.t.Helper()
	if err := tb.Page.GetByLabel(label, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(value); err != nil {
		tb.Fatalf("fill %q: %v", label, err)
	}
}

// Click presses the shown button or link with the accessible name. A link
// of the navigation that a phone folds into its menu is pressed there, the
// menu opened first.
func (tb *Tab) Click(role, name string) {
	tb.t.Helper()
	shown := playwright.LocatorFilterOptions{Visible: playwright.Bool(true)}
	target := tb.Page.GetByRole(playwright.AriaRole(role), playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)}).Filter(shown).First()
	if role == "link" {
		// Decided on a parsed page, once the link or the folded menu
		// holding it shows: each check waits, none reads a page half there.
		if err := tb.Page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateDomcontentloaded}); err != nil {
			tb.Fatalf("click link %q: the page never loaded: %v", name, err)
		}
		menu := tb.Page.Locator("details.phone-nav")
		inMenu := menu.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: name, Exact: playwright.Bool(true), IncludeHidden: playwright.Bool(true)}).First()
		summary := menu.Locator("summary").Filter(shown)
		if err := target.Or(summary).First().WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}); err != nil {
			tb.Fatalf("click link %q: neither it nor the menu shows: %v", name, err)
		}
		folded, _ := inMenu.Count()
		if n, _ := target.Count(); n == 0 && folded > 0 {
			if open, _ := inMenu.IsVisible(); !open {
				if err := summary.Click(); err != nil {
					tb.Fatalf("open the menu: %v", err)
				}
			}
			target = inMenu
		}
	}
	tb.act()
	if err := target.Click(); err != nil {
		tb.Fatalf("click %s %q: %v", role, name, err)
	}
}

// ClickOn presses the element l finds, as an action WaitURL waits after.
func (tb *Tab) ClickOn(l playwright.Locator) {
	tb.t.Helper()
	tb.act()
	if err := l.Click(); err != nil {
		tb.Fatalf("click %v: %v", l, err)
	}
}

// Inside clicks the first button within the element matching selector
// and waits for the page it leads to: a document committed after the
// click, then its load.
func (tb *Tab) Inside(selector string) {
	tb.t.Helper()
	tb.act()
	if err := tb.Page.Locator(selector + " button").First().Click(); err != nil {
		tb.Fatalf("click the button in %s: %v", selector, err)
	}
	if !tb.waitLeft() {
		tb.Fatalf("the button in %s led to no page: still %s", selector, tb.Page.URL())
	}
	if err := tb.Page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateLoad}); err != nil {
		tb.Fatal(err)
	}
}

// Choose selects value in the select matching selector.
func (tb *Tab) Choose(selector, value string) {
	tb.t.Helper()
	tb.act()
	if _, err := tb.Page.Locator(selector).SelectOption(playwright.SelectOptionValues{Values: &[]string{value}}); err != nil {
		tb.Fatalf("choose %s in %s: %v", value, selector, err)
	}
}

// SignIn signs in through the form and waits to leave the sign-in page.
func (tb *Tab) SignIn(base, email, password string) {
	tb.t.Helper()
	if !strings.Contains(tb.Page.URL(), "/dashboard/sign-in") {
		tb.Open(base + "/dashboard/sign-in")
	}
	tb.Fill("Email", email)
	tb.Fill("Password", password)
	tb.Click("button", "Sign in")
	tb.WaitURL(`/dashboard(/[a-z-]+.*)?$`)
}
