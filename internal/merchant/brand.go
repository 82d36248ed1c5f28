package merchant

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	_ "image/jpeg" // the decoders image.Decode accepts for logos
	_ "image/png"
	"math"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/person"
)

// Logo limits. A logo is shown at most about 200 CSS pixels wide, so a
// 1024-pixel image is sharp on any screen; 200 KB keeps the page light.
const (
	MaxLogoBytes     = 200 << 10
	MaxLogoPixels    = 1024
	MaxDisplayName   = 60
	LogoTypePNG      = "image/png"
	LogoTypeJPEG     = "image/jpeg"
	defaultInkOnLite = "#000000"
)

// Brand is how the hosted page presents a merchant, in both environments.
// Zero fields fall back to the page's own: the merchant's name, the
// page's blue, no logo.
type Brand struct {
	DisplayName string // the name customers see; "" for the merchant's name
	Accent      string // "#rrggbb" in lower case; "" for the page's own
	LogoType    string // LogoTypePNG or LogoTypeJPEG; "" without a logo
	LogoVersion string // the logo's SHA-256 in hex, which versions its address
}

// HasLogo reports whether the merchant uploaded a logo.
func (b Brand) HasLogo() bool { return b.LogoType != "" }

// Logo is an uploaded logo as stored and served.
type Logo struct {
	Type   string // LogoTypePNG or LogoTypeJPEG, from the bytes, never the file name
	Data   []byte
	SHA256 []byte
}

// BrandChange is a Settings form: the display name and accent replace the
// stored ones ("" clears); Logo replaces the logo when not empty;
// RemoveLogo drops it.
type BrandChange struct {
	DisplayName string
	Accent      string
	Logo        []byte
	RemoveLogo  bool
}

// BrandStore is the persistence of brands (part of Store).
type BrandStore interface {
	// Brand returns the merchant's brand, the zero Brand when it has none.
	Brand(ctx context.Context, merchantID string) (Brand, error)
	// Logo returns the merchant's logo; errs.NotFound when it has none.
	Logo(ctx context.Context, merchantID string) (Logo, error)
	// SetBrand stores the display name and accent ("" stores none) and,
	// when logo is not nil, replaces the logo (a zero Logo removes it).
	SetBrand(ctx context.Context, merchantID, displayName, accent string, logo *Logo, at time.Time) error
}

// Brand returns the merchant's brand.
func (s *Service) Brand(ctx context.Context, merchantID string) (Brand, error) {
	b, err := s.store.Brand(ctx, merchantID)
	if err != nil {
		return Brand{}, fmt.Errorf("read the brand of merchant %s: %w", merchantID, err)
	}
	return b, nil
}

// Logo returns the merchant's logo; errs.NotFound when it has none.
func (s *Service) Logo(ctx context.Context, merchantID string) (Logo, error) {
	l, err := s.store.Logo(ctx, merchantID)
	if err != nil {
		return Logo{}, fmt.Errorf("read the logo of merchant %s: %w", merchantID, err)
	}
	return l, nil
}

// SetBrand checks every part of ch before it writes any: a refused part
// is errs.InvalidRequest naming display_name, accent or logo, and nothing
// changes. A change is audited as settings.changed in its transaction.
func (s *Service) SetBrand(ctx context.Context, merchantID string, ch BrandChange, by audit.Actor) (Brand, error) {
	name, err := person.Name("display_name", ch.DisplayName, MaxDisplayName, person.Optional)
	if err != nil {
		return Brand{}, errs.Invalid("display_name", fmt.Sprintf("the display name must be at most %d characters, without control characters", MaxDisplayName))
	}
	accent, err := ParseAccent(ch.Accent)
	if err != nil {
		return Brand{}, err
	}
	var logo *Logo
	details := map[string]string{"setting": "brand", "display_name": name, "accent": accent, "logo": "unchanged"}
	switch {
	case len(ch.Logo) > 0:
		l, err := CheckLogo(ch.Logo)
		if err != nil {
			return Brand{}, err
		}
		logo, details["logo"] = &l, "replaced"
	case ch.RemoveLogo:
		logo, details["logo"] = &Logo{}, "removed"
	}
	err = s.store.WithTx(ctx, func(tx Store) error {
		if err := tx.SetBrand(ctx, merchantID, name, accent, logo, s.now().UTC()); err != nil {
			return fmt.Errorf("store the brand of merchant %s: %w", merchantID, err)
		}
		if err := tx.RecordAudit(ctx, audit.Account(merchantID, audit.SettingsChanged, by, details)); err != nil {
			return fmt.Errorf("record the brand change of merchant %s: %w", merchantID, err)
		}
		return nil
	})
	if err != nil {
		return Brand{}, err
	}
	s.keys.Clear() // this process at once; others on the trigger's notification
	return s.Brand(ctx, merchantID)
}

// ParseAccent normalizes an accent colour: "#rrggbb" or "#rgb", with or
// without '#', any case; "" is no accent.
func ParseAccent(raw string) (string, error) {
	v := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(raw), "#"))
	if v == "" {
		return "", nil
	}
	if len(v) == 3 {
		v = string([]byte{v[0], v[0], v[1], v[1], v[2], v[2]})
	}
	if _, err := hex.DecodeString(v); err != nil || len(v) != 6 {
		return "", errs.Invalid("accent", "the accent colour must be a hex colour like #1a7f5a")
	}
	return "#" + v, nil
}

// CheckLogo accepts a PNG or JPEG of at most MaxLogoBytes and
// MaxLogoPixels a side, judged by its bytes, never its name. SVG is
// refused: it can carry script.
func CheckLogo(data []byte) (Logo, error) {
	if len(data) > MaxLogoBytes {
		return Logo{}, errs.Invalid("logo", fmt.Sprintf("the logo must be at most %d KB; this file is %d KB", MaxLogoBytes>>10, (len(data)+1023)>>10))
	}
	var typ string
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		typ = LogoTypePNG
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		typ = LogoTypeJPEG
	case bytes.Contains(bytes.ToLower(data[:min(len(data), 1024)]), []byte("<svg")):
		return Logo{}, errs.Invalid("logo", "SVG logos are not accepted because they can carry script; upload a PNG or JPEG")
	default:
		return Logo{}, errs.Invalid("logo", "the logo must be a PNG or JPEG image")
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || "image/"+format != typ {
		return Logo{}, errs.Invalid("logo", "the logo is not a readable PNG or JPEG image")
	}
	if cfg.Width > MaxLogoPixels || cfg.Height > MaxLogoPixels || cfg.Width < 1 || cfg.Height < 1 {
		return Logo{}, errs.Invalid("logo", fmt.Sprintf("the logo must be at most %d×%d pixels; this one is %d×%d",
			MaxLogoPixels, MaxLogoPixels, cfg.Width, cfg.Height))
	}
	if typ == LogoTypeJPEG {
		scans, blocks, err := jpegWork(data)
		switch {
		case err != nil:
			return Logo{}, errs.Invalid("logo", "the logo is not a readable PNG or JPEG image")
		case scans > maxJPEGScans:
			return Logo{}, errs.Invalid("logo", fmt.Sprintf("the logo is a JPEG of more than %d scans; save it as a baseline JPEG or a PNG", maxJPEGScans))
		case blocks > maxJPEGBlockVisits:
			return Logo{}, errs.Invalid("logo", "the logo's JPEG takes too much work to decode; save it as a baseline JPEG or a PNG")
		}
	}
	// A header can be valid over a broken image: decode it whole, which
	// the bounds above keep small (see jpegWork for a JPEG's).
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return Logo{}, errs.Invalid("logo", "the logo is not a readable PNG or JPEG image")
	}
	sum := sha256.Sum256(data)
	return Logo{Type: typ, Data: data, SHA256: sum[:]}, nil
}

// luminance is the WCAG relative luminance of "#rrggbb".
func luminance(hexColour string) float64 {
	b, _ := hex.DecodeString(strings.TrimPrefix(hexColour, "#"))
	if len(b) != 3 {
		return 0
	}
	var l [3]float64
	for i, c := range b {
		v := float64(c) / 255
		if v <= 0.04045 {
			l[i] = v / 12.92
		} else {
			l[i] = math.Pow((v+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
}

// Contrast is the WCAG contrast ratio of two "#rrggbb" colours, 1 to 21.
func Contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// OnAccent is the text colour of a button in the accent: white where it
// reads at 4.5:1 or better, else black. One of the two always does
// (black on a colour white fails reaches at least 4.58:1).
func OnAccent(accent string) string {
	if Contrast(accent, "#ffffff") >= 4.5 {
		return "#ffffff"
	}
	return defaultInkOnLite
}

// AccentHover is the accent a step further from its text colour, for a
// hovered button: darker under white text, lighter under black, so the
// text keeps its contrast.
func AccentHover(accent string) string {
	b, _ := hex.DecodeString(strings.TrimPrefix(accent, "#"))
	if len(b) != 3 {
		return accent
	}
	lighten := OnAccent(accent) != "#ffffff"
	for i, c := range b {
		if lighten {
			b[i] = c + byte(float64(255-c)*0.2)
		} else {
			b[i] = byte(float64(c) * 0.85)
		}
	}
	return "#" + hex.EncodeToString(b)
}
