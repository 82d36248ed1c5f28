package dashboard_test

import (
	"image/color"
	"math"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"
)

// Browser checks of the pages' layout, on screenshots Chromium takes.

// sameColour reports whether c is the #rrggbb colour hex.
func sameColour(c color.Color, hex uint32) bool {
	r, g, b, _ := c.RGBA()
	return uint32(r>>8) == hex>>16&0xff && uint32(g>>8) == hex>>8&0xff && uint32(b>>8) == hex&0xff
}

func hexOf(c color.Color) uint32 {
	r, g, b, _ := c.RGBA()
	return uint32(r>>8)<<16 | uint32(g>>8)<<8 | uint32(b>>8)
}

// TestBrowserHostedSandboxBannerSpansTheWindow: at desktop and phone
// widths the sandbox banner is a bar across the whole window, at its top,
// above the card.
func TestBrowserHostedSandboxBannerSpansTheWindow(t *testing.T) {
	s := webtest.NewHostedSetup(t)
	srv := s.H.Live()
	for _, width := range []int{1280, 390} {
		tb := webtest.NewTab(t, webtest.WithViewport(width, 800))
		tb.Open(srv.URL + s.Path(webtest.OkQuery()))
		banner, card := tb.Box("#sandbox-banner"), tb.Box(".card")
		inner := toFloat(tb.Eval(`document.documentElement.clientWidth`))
		if banner.X != 0 || banner.Y != 0 || math.Abs(banner.Width-inner) > 1 || banner.Y+banner.Height > card.Y {
			tb.Errorf("at %d px the banner is at x=%.0f y=%.0f w=%.0f, the window %.0f wide, the card at y=%.0f (the banner must span the window, above the card)",
				width, banner.X, banner.Y, banner.Width, inner, card.Y)
		}
		// In the picture: the banner's colour at both edges of the window.
		img := tb.Capture(false)
		y := int(banner.Y + banner.Height/2)
		for _, x := range []int{2, int(inner) - 3} {
			if c := img.At(x, y); !sameColour(c, 0xfff4d6) {
				tb.Errorf("at %d px the screenshot shows #%06x at (%d,%d), want the banner's #fff4d6", width, hexOf(c), x, y)
			}
		}
	}
}

// TestBrowserDashboardSidebarReachesThePageBottom: on a page shorter than
// the window and on one longer, the sidebar's white runs to the bottom of
// a full-page screenshot.
func TestBrowserDashboardSidebarReachesThePageBottom(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	for _, c := range []struct {
		name, path string
		height     int
	}{
		{"short page", "/dashboard/customers/cus_unknown", 900},
		{"long page", "/dashboard", 400},
	} {
		tb := webtest.NewTab(t, webtest.WithViewport(1280, c.height))
		tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
		tb.Open(srv.URL + c.path)
		img := tb.Capture(true)
		b := img.Bounds()
		if c.name == "long page" && b.Dy() <= c.height {
			tb.Fatalf("%s: the page is %d px tall, not longer than the window", c.name, b.Dy())
		}
		nav := tb.Box(".sidenav")
		for _, y := range []int{b.Max.Y - 2, b.Max.Y / 2} {
			if px := img.At(int(nav.Width/2), y); !sameColour(px, 0xffffff) {
				tb.Errorf("%s: the sidebar column at y=%d of %d is #%06x, want white", c.name, y, b.Dy(), hexOf(px))
			}
		}
	}
}
