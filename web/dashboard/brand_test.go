package dashboard_test

import (
	"bytes"
	"context"
	"image/color"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/testing/webtest"

	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestSettingsBrandRefusesBadInputAndSavesNothing: every refused part of
// the form (a logo too large, too many pixels, HTML named .png, SVG, a
// broken PNG, a colour that is not one, a name too long) shows the
// Settings page again with the reason at its field, and nothing of the
// form is stored, not even its good parts.
func TestSettingsBrandRefusesBadInputAndSavesNothing(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, _ := webtest.SignedIn(t, h, "Acme Books")
	ctx := context.Background()
	m, err := h.Merchants.MerchantByEmail(ctx, "acme.books@example.com")
	if err != nil {
		t.Fatal(err)
	}
	good := webtest.PngOf(t, 64, 32, color.RGBA{0x1a, 0x7f, 0x5a, 0xff})
	big := append(webtest.PngOf(t, 8, 8, color.Black), bytes.Repeat([]byte{0}, merchant.MaxLogoBytes)...)
	for _, c := range []struct {
		name, accent, displayName, file string
		data                            []byte
		status                          int
		field, says                     string
	}{
		{"too large", "#1a7f5a", "Acme", "logo.png", big, 422, "logo", "at most 200 KB"},
		{"too many pixels", "#1a7f5a", "Acme", "logo.png", webtest.PngOf(t, 1500, 10, color.Black), 422, "logo", "at most 1024×1024 pixels"},
		{"HTML named .png", "#1a7f5a", "Acme", "logo.png", []byte("<!doctype html><script>alert(1)</script>"), 422, "logo", "must be a PNG or JPEG"},
		{"SVG", "#1a7f5a", "Acme", "logo.svg", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), 422, "logo", "SVG logos are not accepted"},
		{"SVG named .png", "#1a7f5a", "Acme", "logo.png", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), 422, "logo", "SVG logos are not accepted"},
		{"broken PNG", "#1a7f5a", "Acme", "logo.png", good[:60], 422, "logo", "not a readable PNG or JPEG"},
		{"bad colour", "#12345g", "Acme", "logo.png", good, 422, "accent", "hex colour like #1a7f5a"},
		{"colour name", "green", "Acme", "", nil, 422, "accent", "hex colour like #1a7f5a"},
		{"name too long", "#1a7f5a", strings.Repeat("A", 61), "logo.png", good, 422, "display_name", "at most 60 characters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := d.BrandForm(map[string]string{"display_name": c.displayName, "accent": c.accent}, c.file, c.data)
			body := webtest.WantPage(t, p, c.status, `id="brand-error"`, c.says)
			if !strings.Contains(body, `id="`+c.field+`"`) || !strings.Contains(body, `aria-describedby="`+c.field+`-hint brand-error"`) {
				t.Errorf("the error is not tied to the %s field:\n%s", c.field, body)
			}
			if b, err := h.Merchants.Brand(ctx, m.ID); err != nil || b != (merchant.Brand{}) {
				t.Errorf("after a refused form the brand is %+v, %v: want nothing stored", b, err)
			}
		})
	}
	// A body past the form's bound is cut off: still a page that says why.
	p := d.BrandForm(map[string]string{"display_name": "Acme"}, "logo.png", bytes.Repeat([]byte{0x89}, 2<<20))
	webtest.WantPage(t, p, http.StatusRequestEntityTooLarge, `id="brand-error"`, "at most 200 KB")
	if b, _ := h.Merchants.Brand(ctx, m.ID); b != (merchant.Brand{}) {
		t.Errorf("after an oversized body the brand is %+v", b)
	}
}

// TestHostedPageShowsTheBrandUnderTheSameCSP: a saved brand puts the
// logo (decorative: the name stands beside it), the name and the accent's stylesheet
// on the hosted page, all from this origin, and the page's CSP is the
// same as without a brand. The logo and stylesheet carry their types,
// nosniff, and long caching only at their current version.
func TestHostedPageShowsTheBrandUnderTheSameCSP(t *testing.T) {
	t.Parallel()
	s := webtest.NewHostedSetup(t)
	plainCSP := s.H.Page(s.Path(webtest.OkQuery())).Header.Get("Content-Security-Policy")

	d := webtest.NewDash(s.H)
	if p := d.SignIn("acme.books@example.com", "correct horse battery"); p.Code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.Code)
	}
	logo := webtest.PngOf(t, 120, 40, color.RGBA{0x1a, 0x7f, 0x5a, 0xff})
	p := d.BrandForm(map[string]string{"display_name": "  Acme Books & Co  ", "accent": "1A7F5A"}, "whatever.bin", logo)
	webtest.WantPage(t, d.Follow(p), http.StatusOK, "Saved the hosted page", `value="Acme Books &amp; Co"`, `value="#1a7f5a"`, `id="logo-preview"`)

	page := s.H.Page(s.Path(webtest.OkQuery()))
	body := webtest.WantPage(t, page, http.StatusOK, `id="payee-name">Acme Books &amp; Co<`, `alt=""`,
		`href="/brand/`+s.PK+`/theme.css?v=1a7f5a"`, `src="/brand/`+s.PK+`/logo?v=`)
	if csp := page.Header.Get("Content-Security-Policy"); csp != plainCSP || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "style-src 'self'; script-src 'self'; img-src 'self';") {
		t.Errorf("the branded page's CSP is %q; without a brand %q", csp, plainCSP)
	}
	if strings.Contains(body, "style=") || strings.Contains(body, "<style") {
		t.Errorf("the page carries inline style:\n%s", body)
	}
	src := body[strings.Index(body, `src="/brand/`)+5:]
	src = src[:strings.IndexByte(src, '"')]

	img := s.H.Page(src)
	for k, want := range map[string]string{"Content-Type": "image/png", "X-Content-Type-Options": "nosniff",
		"Cache-Control": "public, max-age=31536000, immutable", "Content-Security-Policy": "default-src 'none'; sandbox",
		"Cross-Origin-Resource-Policy": "same-origin"} {
		if got := img.Header.Get(k); got != want {
			t.Errorf("logo %s = %q, want %q", k, got, want)
		}
	}
	if img.Code != http.StatusOK || !bytes.Equal(img.Body, logo) {
		t.Errorf("logo: %d, %d bytes; want 200 and the uploaded %d", img.Code, len(img.Body), len(logo))
	}
	if stale := s.H.Page("/brand/" + s.PK + "/logo?v=0000000000000000"); stale.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("a stale version is cached: %q", stale.Header.Get("Cache-Control"))
	}

	css := s.H.Page("/brand/" + s.PK + "/theme.css?v=1a7f5a")
	if css.Code != http.StatusOK || css.Header.Get("Content-Type") != "text/css; charset=utf-8" || css.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("theme: %d %q %q", css.Code, css.Header.Get("Content-Type"), css.Header.Get("X-Content-Type-Options"))
	}
	for _, want := range []string{"--accent: #1a7f5a;", "--on-accent: #ffffff;", "--focus: #1a7f5a;"} {
		if !strings.Contains(string(css.Body), want) {
			t.Errorf("theme lacks %q:\n%s", want, css.Body)
		}
	}

	// A light accent gets black text, and the ring and links fall back to ink.
	p = d.BrandForm(map[string]string{"display_name": "Acme Books & Co", "accent": "#ffd400"}, "", nil)
	webtest.WantPage(t, d.Follow(p), http.StatusOK, `id="logo-preview"`)
	light := string(s.H.Page("/brand/" + s.PK + "/theme.css?v=ffd400").Body)
	for _, want := range []string{"--on-accent: #000000;", "--focus: var(--ink);", "--link: var(--ink);"} {
		if !strings.Contains(light, want) {
			t.Errorf("light theme lacks %q:\n%s", want, light)
		}
	}

	// Removing the logo takes it off the page and its address.
	p = d.BrandForm(map[string]string{"display_name": "", "accent": "", "remove_logo": "1"}, "", nil)
	webtest.WantPage(t, d.Follow(p), http.StatusOK, "Saved the hosted page")
	body = webtest.WantPage(t, s.H.Page(s.Path(webtest.OkQuery())), http.StatusOK, `id="payee-name">Acme Books<`)
	if strings.Contains(body, "/brand/") {
		t.Errorf("the page still links a brand file:\n%s", body)
	}
	if r := s.H.Page(src); r.Code != http.StatusNotFound {
		t.Errorf("a removed logo answers %d", r.Code)
	}
	if r := s.H.Page("/brand/pk_test_unknown/logo"); r.Code != http.StatusNotFound {
		t.Errorf("an unknown key's logo answers %d", r.Code)
	}
}

// TestSettingsBrandBoundsLogoUploads: a JPEG scan bomb is refused at the
// logo field before it is decoded, and each merchant may upload ten logos
// an hour, refused ones included; the eleventh is refused (429) with the
// wait, a form without a logo still saves, and one upload is back after
// a tenth of the hour.
func TestSettingsBrandBoundsLogoUploads(t *testing.T) {
	t.Parallel()
	h := webtest.NewHarness(t)
	d, _ := webtest.SignedIn(t, h, "Acme Books")
	m, err := h.Merchants.MerchantByEmail(context.Background(), "acme.books@example.com")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p := d.BrandForm(map[string]string{"display_name": "Acme"}, "logo.jpg", fixture.ProgressiveJPEG(1024, 1024, 4000))
	webtest.WantPage(t, p, http.StatusUnprocessableEntity, `id="brand-error"`, "more than 32 scans")
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("the scan bomb took %v to refuse", took)
	}
	good := webtest.PngOf(t, 64, 32, color.RGBA{0x1a, 0x7f, 0x5a, 0xff})
	for i := 2; i <= 10; i++ {
		if p := d.BrandForm(map[string]string{"display_name": "Acme"}, "logo.png", good); p.Code != http.StatusSeeOther {
			t.Fatalf("upload %d: %d\n%s", i, p.Code, p.Body)
		}
	}
	p = d.BrandForm(map[string]string{"display_name": "Acme Two"}, "logo.png", good)
	webtest.WantPage(t, p, http.StatusTooManyRequests, `id="brand-error"`, "uploaded 10 logos in the last hour", "about 6 minutes")
	if b, _ := h.Merchants.Brand(context.Background(), m.ID); b.DisplayName != "Acme" {
		t.Errorf("the refused form stored %+v", b)
	}
	if p := d.BrandForm(map[string]string{"display_name": "Acme Three"}, "", nil); p.Code != http.StatusSeeOther {
		t.Errorf("a form without a logo: %d", p.Code)
	}
	h.Clock.Advance(6 * time.Minute)
	if p := d.BrandForm(map[string]string{"display_name": "Acme"}, "logo.png", good); p.Code != http.StatusSeeOther {
		t.Errorf("after six minutes: %d", p.Code)
	}
}
