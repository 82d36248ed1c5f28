package merchant_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/testing/fixture"
)

// TestCheckLogoBoundsTheJPEGDecode: a progressive JPEG of more than 32
// scans, or whose scans make the decoder visit more blocks than the
// budget, is refused before any decode, so a scan bomb costs nothing;
// 32 scans, and the budget exactly, pass.
func TestCheckLogoBoundsTheJPEGDecode(t *testing.T) {
	for _, c := range []struct {
		name          string
		w, h, scans   int
		refused, says string
	}{
		{"32 scans", 64, 64, 32, "", ""},
		{"33 scans", 64, 64, 33, "logo", "more than 32 scans"},
		{"budget exactly", 1024, 1024, 16, "", ""},
		{"budget and one scan over", 1024, 1024, 17, "logo", "too much work to decode"},
		{"scan bomb", 1024, 1024, 8000, "logo", "more than 32 scans"},
	} {
		data := fixture.ProgressiveJPEG(c.w, c.h, c.scans)
		start := time.Now()
		l, err := merchant.CheckLogo(data)
		took := time.Since(start)
		if c.refused == "" {
			if err != nil || l.Type != merchant.LogoTypeJPEG {
				t.Errorf("%s: %v, want accepted", c.name, err)
			}
			continue
		}
		e, ok := errs.As(err)
		if !ok || e.Code != errs.InvalidRequest || e.Param != c.refused || !strings.Contains(e.Message, c.says) {
			t.Errorf("%s: %v, want invalid_request at %s saying %q", c.name, err, c.refused, c.says)
		}
		if took > 20*time.Millisecond {
			t.Errorf("%s: refused after %v: the decode was not avoided", c.name, took)
		}
	}
}
