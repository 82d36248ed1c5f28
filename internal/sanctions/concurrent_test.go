package sanctions

import (
	"sync"
	"testing"
)

// TestNormalizeIsSafeFromManyGoroutines: requests screen names at once,
// so folding must not share a transformer's state between them.
func TestNormalizeIsSafeFromManyGoroutines(t *testing.T) {
	names := map[string]string{"José Ñúñez-García": "jose nunez garcia", "Zoë Ørsted": "zoe rsted", "Ångström Ltd.": "angstrom ltd"}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				for in, want := range names {
					if got := Normalize(in); got != want {
						t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
