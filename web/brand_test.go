package web_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/testing/fixture"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// pngOf is a w×h PNG in one colour.
func pngOf(t testing.TB, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// brandForm posts the Settings brand form as a browser does: multipart,
// with the logo (when fileName is not "") as a file part.
func (d *dash) brandForm(fields map[string]string, fileName string, file []byte) *th.Response {
	d.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if fileName != "" {
		part, _ := w.CreateFormFile("logo", fileName)
		_, _ = part.Write(file)
	}
	_ = w.Close()
	return d.send(http.MethodPost, "/dashboard/settings/brand", &body,
		map[string]string{"Content-Type": w.FormDataContentType(), "Sec-Fetch-Site": "same-origin"})
}

// TestSettingsBrandRefusesBadInputAndSavesNothing: every refused part of
// the form (a logo too large, too many pixels, HTML named .png, SVG, a
// broken PNG, a colour that is not one, a name too long) shows the
// Settings page again with the reason at its field, and nothing of the
// form is stored, not even its good parts.
func TestSettingsBrandRefusesBadInputAndSavesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	d, _ := signedIn(t, h, "Acme Books")
	ctx := context.Background()
	m, err := h.Merchants.MerchantByEmail(ctx, "acme.books@example.com")
	if err != nil {
		t.Fatal(err)
	}
	good := pngOf(t, 64, 32, color.RGBA{0x1a, 0x7f, 0x5a, 0xff})
	big := append(pngOf(t, 8, 8, color.Black), bytes.Repeat([]byte{0}, merchant.MaxLogoBytes)...)
	for _, c := range []struct {
		name, accent, displayName, file string
		data                            []byte
		status                          int
		field, says                     string
	}{
		{"too large", "#1a7f5a", "Acme", "logo.png", big, 422, "logo", "at most 200 KB"},
		{"too many pixels", "#1a7f5a", "Acme", "logo.png", pngOf(t, 1500, 10, color.Black), 422, "logo", "at most 1024×1024 pixels"},
		{"HTML named .png", "#1a7f5a", "Acme", "logo.png", []byte("<!doctype html><script>alert(1)</script>"), 422, "logo", "must be a PNG or JPEG"},
		{"SVG", "#1a7f5a", "Acme", "logo.svg", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), 422, "logo", "SVG logos are not accepted"},
		{"SVG named .png", "#1a7f5a", "Acme", "logo.png", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), 422, "logo", "SVG logos are not accepted"},
		{"broken PNG", "#1a7f5a", "Acme", "logo.png", good[:60], 422, "logo", "not a readable PNG or JPEG"},
		{"bad colour", "#12345g", "Acme", "logo.png", good, 422, "accent", "hex colour like #1a7f5a"},
		{"colour name", "green", "Acme", "", nil, 422, "accent", "hex colour like #1a7f5a"},
		{"name too long", "#1a7f5a", strings.Repeat("A", 61), "logo.png", good, 422, "display_name", "at most 60 characters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := d.brandForm(map[string]string{"display_name": c.displayName, "accent": c.accent}, c.file, c.data)
			body := wantPage(t, p, c.status, `id="brand-error"`, c.says)
			if !strings.Contains(body, `id="`+c.field+`"`) || !strings.Contains(body, `aria-describedby="`+c.field+`-hint brand-error"`) {
				t.Errorf("the error is not tied to the %s field:\n%s", c.field, body)
			}
			if b, err := h.Merchants.Brand(ctx, m.ID); err != nil || b != (merchant.Brand{}) {
				t.Errorf("after a refused form the brand is %+v, %v: want nothing stored", b, err)
			}
		})
	}
	// A body past the form's bound is cut off: still a page that says why.
	p := d.brandForm(map[string]string{"display_name": "Acme"}, "logo.png", bytes.Repeat([]byte{0x89}, 2<<20))
	wantPage(t, p, http.StatusRequestEntityTooLarge, `id="brand-error"`, "at most 200 KB")
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
	s := newHostedSetup(t)
	plainCSP := s.h.page(s.path(okQuery())).Header.Get("Content-Security-Policy")

	d := newDash(s.h)
	if p := d.signIn("acme.books@example.com", "correct horse battery"); p.Code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.Code)
	}
	logo := pngOf(t, 120, 40, color.RGBA{0x1a, 0x7f, 0x5a, 0xff})
	p := d.brandForm(map[string]string{"display_name": "  Acme Books & Co  ", "accent": "1A7F5A"}, "whatever.bin", logo)
	wantPage(t, d.follow(p), http.StatusOK, "Saved the hosted page", `value="Acme Books &amp; Co"`, `value="#1a7f5a"`, `id="logo-preview"`)

	page := s.h.page(s.path(okQuery()))
	body := wantPage(t, page, http.StatusOK, `id="payee-name">Acme Books &amp; Co<`, `alt=""`,
		`href="/brand/`+s.pk+`/theme.css?v=1a7f5a"`, `src="/brand/`+s.pk+`/logo?v=`)
	if csp := page.Header.Get("Content-Security-Policy"); csp != plainCSP || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "style-src 'self'; script-src 'self'; img-src 'self';") {
		t.Errorf("the branded page's CSP is %q; without a brand %q", csp, plainCSP)
	}
	if strings.Contains(body, "style=") || strings.Contains(body, "<style") {
		t.Errorf("the page carries inline style:\n%s", body)
	}
	src := body[strings.Index(body, `src="/brand/`)+5:]
	src = src[:strings.IndexByte(src, '"')]

	img := s.h.page(src)
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
	if stale := s.h.page("/brand/" + s.pk + "/logo?v=0000000000000000"); stale.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("a stale version is cached: %q", stale.Header.Get("Cache-Control"))
	}

	css := s.h.page("/brand/" + s.pk + "/theme.css?v=1a7f5a")
	if css.Code != http.StatusOK || css.Header.Get("Content-Type") != "text/css; charset=utf-8" || css.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("theme: %d %q %q", css.Code, css.Header.Get("Content-Type"), css.Header.Get("X-Content-Type-Options"))
	}
	for _, want := range []string{"--accent: #1a7f5a;", "--on-accent: #ffffff;", "--focus: #1a7f5a;"} {
		if !strings.Contains(string(css.Body), want) {
			t.Errorf("theme lacks %q:\n%s", want, css.Body)
		}
	}

	// A light accent gets black text, and the ring and links fall back to ink.
	p = d.brandForm(map[string]string{"display_name": "Acme Books & Co", "accent": "#ffd400"}, "", nil)
	wantPage(t, d.follow(p), http.StatusOK, `id="logo-preview"`)
	light := string(s.h.page("/brand/" + s.pk + "/theme.css?v=ffd400").Body)
	for _, want := range []string{"--on-accent: #000000;", "--focus: var(--ink);", "--link: var(--ink);"} {
		if !strings.Contains(light, want) {
			t.Errorf("light theme lacks %q:\n%s", want, light)
		}
	}

	// Removing the logo takes it off the page and its address.
	p = d.brandForm(map[string]string{"display_name": "", "accent": "", "remove_logo": "1"}, "", nil)
	wantPage(t, d.follow(p), http.StatusOK, "Saved the hosted page")
	body = wantPage(t, s.h.page(s.path(okQuery())), http.StatusOK, `id="payee-name">Acme Books<`)
	if strings.Contains(body, "/brand/") {
		t.Errorf("the page still links a brand file:\n%s", body)
	}
	if r := s.h.page(src); r.Code != http.StatusNotFound {
		t.Errorf("a removed logo answers %d", r.Code)
	}
	if r := s.h.page("/brand/pk_test_unknown/logo"); r.Code != http.StatusNotFound {
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
	h := newHarness(t)
	d, _ := signedIn(t, h, "Acme Books")
	m, err := h.Merchants.MerchantByEmail(context.Background(), "acme.books@example.com")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p := d.brandForm(map[string]string{"display_name": "Acme"}, "logo.jpg", fixture.ProgressiveJPEG(1024, 1024, 4000))
	wantPage(t, p, http.StatusUnprocessableEntity, `id="brand-error"`, "more than 32 scans")
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("the scan bomb took %v to refuse", took)
	}
	good := pngOf(t, 64, 32, color.RGBA{0x1a, 0x7f, 0x5a, 0xff})
	for i := 2; i <= 10; i++ {
		if p := d.brandForm(map[string]string{"display_name": "Acme"}, "logo.png", good); p.Code != http.StatusSeeOther {
			t.Fatalf("upload %d: %d\n%s", i, p.Code, p.Body)
		}
	}
	p = d.brandForm(map[string]string{"display_name": "Acme Two"}, "logo.png", good)
	wantPage(t, p, http.StatusTooManyRequests, `id="brand-error"`, "uploaded 10 logos in the last hour", "about 6 minutes")
	if b, _ := h.Merchants.Brand(context.Background(), m.ID); b.DisplayName != "Acme" {
		t.Errorf("the refused form stored %+v", b)
	}
	if p := d.brandForm(map[string]string{"display_name": "Acme Three"}, "", nil); p.Code != http.StatusSeeOther {
		t.Errorf("a form without a logo: %d", p.Code)
	}
	h.Clock.Advance(6 * time.Minute)
	if p := d.brandForm(map[string]string{"display_name": "Acme"}, "logo.png", good); p.Code != http.StatusSeeOther {
		t.Errorf("after six minutes: %d", p.Code)
	}
}
