package dashboard_test

import (
	"context"
	"image/color"
	"math"
	"testing"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/playwright-community/playwright-go"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/merchant"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// TestBrowserHostedPageShowsTheBrand: at desktop and phone widths the
// hosted page heads its card with the merchant's logo (loaded, under the
// page's CSP) and display name, paints its button and focus ring in the
// accent, keeps the sandbox banner across the whole window above the card,
// and passes axe-core.
func TestBrowserHostedPageShowsTheBrand(t *testing.T) {
	s := webtest.NewHostedSetup(t)
	if _, err := s.H.Merchants.SetBrand(context.Background(), s.Scope.MerchantID, merchant.BrandChange{
		DisplayName: "Acme Books & Co", Accent: "#1a7f5a", Logo: webtest.PngOf(t, 240, 80, color.RGBA{0x1a, 0x7f, 0x5a, 0xff}),
	}, audit.Operator("test")); err != nil {
		t.Fatal(err)
	}
	th.WantOK(t, s.H.Initiate(s.Key, s.Src))
	srv := s.H.Live()
	for _, width := range []int{1280, 390} {
		tb := webtest.NewTab(t, webtest.WithViewport(width, 800))
		var blocked []string
		tb.Page.On("console", func(m playwright.ConsoleMessage) {
			if m.Type() == "error" {
				blocked = append(blocked, m.Text())
			}
		})
		tb.Open(srv.URL + s.Path(webtest.OkQuery()))
		if got := tb.ImageWidth("#payee-logo"); got != 240 {
			tb.Errorf("at %d px the logo's natural width is %v, want 240 (loaded)", width, got)
		}
		// The name stands beside the logo, so the logo is decorative and a
		// screen reader hears the name once.
		if alt := tb.Eval(`document.querySelector('#payee-logo').getAttribute('alt')`); alt != "" {
			tb.Errorf("at %d px the logo's alt is %q, want empty", width, alt)
		}
		if got := tb.Text("#payee-name"); got != "Acme Books & Co" {
			tb.Errorf("at %d px the name reads %q", width, got)
		}
		logo, name, card, heading := tb.Box("#payee-logo"), tb.Box("#payee-name"), tb.Box(".card"), tb.Box("#page-heading")
		if logo.Y < card.Y || logo.Y+logo.Height > heading.Y || name.Y+name.Height > heading.Y || logo.Height > 49 {
			tb.Errorf("at %d px the logo (y=%.0f h=%.0f) and name (y=%.0f) do not head the card (y=%.0f, heading at %.0f)",
				width, logo.Y, logo.Height, name.Y, card.Y, heading.Y)
		}

		// The banner spans the whole window, above the card.
		banner := tb.Box("#sandbox-banner")
		inner := tb.Eval(`document.documentElement.clientWidth`)
		if banner.X != 0 || banner.Y != 0 || math.Abs(banner.Width-toFloat(inner)) > 1 || banner.Y+banner.Height > card.Y {
			tb.Errorf("at %d px the banner is at x=%.0f y=%.0f w=%.0f (window %v wide), the card at y=%.0f",
				width, banner.X, banner.Y, banner.Width, inner, card.Y)
		}

		if bg := tb.Eval(`getComputedStyle(document.querySelector('#verify')).backgroundColor`); bg != "rgb(26, 127, 90)" {
			tb.Errorf("at %d px the button is %v, want the accent rgb(26, 127, 90)", width, bg)
		}
		if err := tb.Page.Locator("#amount1").Focus(); err != nil {
			tb.Fatal(err)
		}
		if ring := tb.Eval(`getComputedStyle(document.querySelector('.money')).outlineColor`); ring != "rgb(26, 127, 90)" {
			tb.Errorf("at %d px the focus ring is %v, want the accent", width, ring)
		}
		if len(blocked) > 0 {
			tb.Errorf("at %d px the console reports: %v", width, blocked)
		}
		tb.FitsWidth()
		tb.Axe()
	}
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case float64:
		return n
	}
	return math.NaN()
}

// TestBrowserSettingsBrandUpload: the Settings form uploads a logo chosen
// in the file input; an SVG named logo.png is refused with the reason at
// the field and the typed values kept; a PNG is saved and previewed.
func TestBrowserSettingsBrandUpload(t *testing.T) {
	h := webtest.NewHarness(t)
	srv := h.Live()
	m := h.Merchant("Acme Books")
	tb := webtest.NewTab(t, webtest.WithViewport(1280, 900))
	tb.SignIn(srv.URL, m.Merchant.Email, "correct horse battery")
	tb.Open(srv.URL + "/dashboard/settings")

	tb.Fill("Display name", "Acme Books & Co")
	tb.Fill("Accent colour", "#1a7f5a")
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	if err := tb.Page.Locator("#logo").SetInputFiles([]playwright.InputFile{{Name: "logo.png", MimeType: "image/png", Buffer: svg}}); err != nil {
		tb.Fatal(err)
	}
	tb.Click("button", "Save brand")
	if got := tb.Text("#brand-error"); got != "SVG logos are not accepted because they can carry script; upload a PNG or JPEG." {
		tb.Errorf("the refusal reads %q", got)
	}
	if got := tb.Value("#display_name"); got != "Acme Books & Co" {
		tb.Errorf("the typed name is not kept: %q", got)
	}
	tb.WantFocus("#logo")
	tb.Axe()

	if err := tb.Page.Locator("#logo").SetInputFiles([]playwright.InputFile{{Name: "acme.png", MimeType: "image/png",
		Buffer: webtest.PngOf(t, 64, 32, color.RGBA{0x1a, 0x7f, 0x5a, 0xff})}}); err != nil {
		tb.Fatal(err)
	}
	tb.Click("button", "Save brand")
	tb.WaitURL(`/dashboard/settings$`)
	tb.WantText("Saved the hosted page's brand.")
	if got := tb.ImageWidth("#logo-preview"); got != 64 {
		tb.Errorf("the preview's natural width is %v, want 64", got)
	}
	b, err := h.Merchants.Brand(context.Background(), m.Merchant.ID)
	if err != nil || b.DisplayName != "Acme Books & Co" || b.Accent != "#1a7f5a" || b.LogoType != merchant.LogoTypePNG {
		tb.Errorf("stored brand %+v, %v", b, err)
	}
	tb.Axe()
}
