package webtest

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// Dash is a browser without a browser: it keeps the dashboard's cookies
// and sends forms through the real engine.
type Dash struct {
	t       *testing.T
	H       *Harness
	Cookies map[string]*http.Cookie
	Remote  string
}

// NewDash returns a signed-out dashboard client on h.
func NewDash(h *Harness) *Dash {
	return &Dash{t: h.T.(*testing.T), H: h, Cookies: map[string]*http.Cookie{}, Remote: "192.0.2.10:5000"}
}

// Do sends a form (nil for none) with the client's cookies.
func (d *Dash) Do(method, path string, form url.Values, header map[string]string) *th.Response {
	d.t.Helper()
	if form == nil {
		return d.send(method, path, nil, header)
	}
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	maps.Copy(h, header)
	return d.send(method, path, strings.NewReader(form.Encode()), h)
}

// send sends body with the client's cookies and keeps the cookies set.
func (d *Dash) send(method, path string, body io.Reader, header map[string]string) *th.Response {
	d.t.Helper()
	r := httptest.NewRequest(method, path, body)
	r.RemoteAddr = d.Remote
	for k, v := range header {
		r.Header.Set(k, v)
	}
	for _, c := range d.Cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	d.H.Engine.ServeHTTP(w, r)
	res := w.Result()
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 {
			delete(d.Cookies, c.Name)
		} else {
			d.Cookies[c.Name] = c
		}
	}
	return &th.Response{Code: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
}

// Get gets a page.
func (d *Dash) Get(path string) *th.Response { return d.Do(http.MethodGet, path, nil, nil) }

// Post posts a form as the dashboard's own pages do (same origin).
func (d *Dash) Post(path string, form url.Values) *th.Response {
	return d.Do(http.MethodPost, path, form, map[string]string{"Sec-Fetch-Site": "same-origin"})
}

// Follow gets the page a 303 points at.
func (d *Dash) Follow(p *th.Response) *th.Response {
	d.t.Helper()
	if p.Code != http.StatusSeeOther {
		d.t.Fatalf("got %d, want a 303\n%s", p.Code, p.Body)
	}
	return d.Get(p.Header.Get("Location"))
}

// SignIn posts the sign-in form.
func (d *Dash) SignIn(email, password string) *th.Response {
	return d.Post("/dashboard/sign-in", url.Values{"email": {email}, "password": {password}})
}

// SignedIn returns a dashboard client signed in as a new merchant.
func SignedIn(t *testing.T, h *Harness, name string) (*Dash, string) {
	m := h.Merchant(name)
	d := NewDash(h)
	if p := d.SignIn(m.Merchant.Email, "correct horse battery"); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard" {
		t.Fatalf("sign in: %d %s", p.Code, p.Header.Get("Location"))
	}
	return d, m.Sandbox.SecretKey
}

// PngOf is a w×h PNG in one colour.
func PngOf(t testing.TB, w, h int, c color.Color) []byte {
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

// BrandForm posts the Settings brand form as a browser does: multipart,
// with the logo (when fileName is not "") as a file part.
func (d *Dash) BrandForm(fields map[string]string, fileName string, file []byte) *th.Response {
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
