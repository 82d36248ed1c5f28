package achcode

import "testing"

// TestEveryKnownCodeHasAShortTitle: each code the service names has a
// title of at most 26 characters, shorter than or equal to its reason,
// and an unknown code's title is the generic reason.
func TestEveryKnownCodeHasAShortTitle(t *testing.T) {
	for _, c := range Known() {
		title := Title(c)
		if _, ok := returnTitles[c]; !ok || len(title) > 26 || len(title) > len(Reason(c)) {
			t.Errorf("%s: title %q (reason %q)", c, title, Reason(c))
		}
	}
	if got := Title("R99"); got != Reason("R99") {
		t.Errorf("Title(R99) = %q", got)
	}
}
