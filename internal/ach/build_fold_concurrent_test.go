package ach

import (
	"sync"
	"testing"
)

// TestASCIIIsSafeFromManyGoroutines: files and payments fold names at
// once, so folding must not share a transformer's state between them.
func TestASCIIIsSafeFromManyGoroutines(t *testing.T) {
	want := ASCII("José Ñúñez-García ﬁne")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				if got := ASCII("José Ñúñez-García ﬁne"); got != want {
					t.Errorf("ASCII = %q, want %q", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
