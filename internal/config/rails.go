package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fundsource/fundsource/internal/core/money"
)

// DefaultInstantRailLimits is INSTANT_RAIL_LIMITS when unset: the largest
// credit each instant rail carries (RTP's and FedNow's network limits).
const DefaultInstantRailLimits = "rtp=10000000.00,fednow=500000.00"

// instantRails are the rails INSTANT_RAIL_LIMITS may name.
var instantRails = []string{"rtp", "fednow"}

// ParseInstantRailLimits reads "rail=dollars,…" into cents by rail. Every
// rail must be named once, with a positive amount of at most two decimals:
// a rail left out would otherwise carry credits of any size.
func ParseInstantRailLimits(s string) (map[string]int64, error) {
	out := map[string]int64{}
	for part := range strings.SplitSeq(s, ",") {
		name, amount, ok := strings.Cut(strings.TrimSpace(part), "=")
		name, amount = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(amount)
		if !ok || name == "" {
			return nil, fmt.Errorf("INSTANT_RAIL_LIMITS: %q is not rail=amount", part)
		}
		if !slices.Contains(instantRails, name) {
			return nil, fmt.Errorf("INSTANT_RAIL_LIMITS: unknown rail %q (rtp or fednow)", name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("INSTANT_RAIL_LIMITS: rail %s named twice", name)
		}
		cents, ok := money.ParseCents(amount)
		if !ok || cents <= 0 {
			return nil, fmt.Errorf("INSTANT_RAIL_LIMITS: %s's limit %q must be a positive amount of dollars like 500000.00", name, amount)
		}
		out[name] = cents
	}
	for _, r := range instantRails {
		if _, ok := out[r]; !ok {
			return nil, fmt.Errorf("INSTANT_RAIL_LIMITS: no limit for %s", r)
		}
	}
	return out, nil
}
