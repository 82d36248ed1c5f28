package merchant

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
)

func TestParseAccent(t *testing.T) {
	for in, want := range map[string]string{
		"#1A7F5A": "#1a7f5a", "1a7f5a": "#1a7f5a", " #abc ": "#aabbcc", "": "",
		"#12345g": "!", "green": "!", "#1a7f5a0": "!", "#1234": "!", "##1a7f5a": "!",
	} {
		got, err := ParseAccent(in)
		if want == "!" {
			if e, ok := errs.As(err); !ok || e.Code != errs.InvalidRequest || e.Param != "accent" {
				t.Errorf("ParseAccent(%q) = %q, %v: want invalid_request on accent", in, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ParseAccent(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestOnAccentAlwaysReads: whatever the accent, the button's text has a
// contrast of at least 4.5:1 on it, and so does the hover.
func TestOnAccentAlwaysReads(t *testing.T) {
	for r := 0; r < 256; r += 15 {
		for g := 0; g < 256; g += 15 {
			for b := 0; b < 256; b += 15 {
				a := fmt.Sprintf("#%02x%02x%02x", r, g, b)
				text := OnAccent(a)
				if c := Contrast(a, text); c < 4.5 {
					t.Fatalf("%s under %s: contrast %.2f", text, a, c)
				}
				if c := Contrast(AccentHover(a), text); c < 4.5 {
					t.Fatalf("%s under the hover %s of %s: contrast %.2f", text, AccentHover(a), a, c)
				}
			}
		}
	}
	if c := Contrast("#000000", "#ffffff"); c < 20.9 || c > 21.1 {
		t.Errorf("black on white: %.2f, want 21", c)
	}
}

func encoded(t *testing.T, enc func(*bytes.Buffer, image.Image) error, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 0x80
	}
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCheckLogoJudgesTheBytes: the type comes from the bytes; a JPEG is
// accepted, a PNG header over a JPEG body or a GIF is not.
func TestCheckLogoJudgesTheBytes(t *testing.T) {
	pngBytes := encoded(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) }, 100, 50)
	jpegBytes := encoded(t, func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) }, 100, 50)
	for name, c := range map[string]struct {
		data []byte
		typ  string
	}{
		"png":                 {pngBytes, LogoTypePNG},
		"jpeg":                {jpegBytes, LogoTypeJPEG},
		"png magic over jpeg": {append([]byte("\x89PNG\r\n\x1a\n"), jpegBytes...), ""},
		"gif":                 {[]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), ""},
		"1024 wide":           {encoded(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) }, MaxLogoPixels, 1), LogoTypePNG},
		"1025 tall":           {encoded(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) }, 1, MaxLogoPixels+1), ""},
	} {
		l, err := CheckLogo(c.data)
		if c.typ == "" {
			if e, ok := errs.As(err); !ok || e.Param != "logo" {
				t.Errorf("%s: accepted as %q (%v)", name, l.Type, err)
			}
			continue
		}
		if err != nil || l.Type != c.typ || len(l.SHA256) != 32 || !bytes.Equal(l.Data, c.data) {
			t.Errorf("%s: %q, %v; want %s", name, l.Type, err, c.typ)
		}
	}
}
