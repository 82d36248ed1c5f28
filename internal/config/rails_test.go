package config

import (
	"maps"
	"strings"
	"testing"
)

func TestParseInstantRailLimits(t *testing.T) {
	got, err := ParseInstantRailLimits(DefaultInstantRailLimits)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"rtp": 1_000_000_000, "fednow": 50_000_000}; !maps.Equal(got, want) {
		t.Errorf("default = %v, want %v", got, want)
	}
	got, err = ParseInstantRailLimits(" FedNow = 0.01 , rtp=25")
	if err != nil || got["fednow"] != 1 || got["rtp"] != 2500 {
		t.Errorf("spaced = %v, %v", got, err)
	}
	for name, s := range map[string]string{
		"empty":          "",
		"missing rail":   "rtp=100.00",
		"unknown rail":   "rtp=1,fednow=1,ach=1",
		"twice":          "rtp=1,rtp=2,fednow=1",
		"zero":           "rtp=0,fednow=1",
		"negative":       "rtp=-1,fednow=1",
		"three decimals": "rtp=1.001,fednow=1",
		"no amount":      "rtp,fednow=1",
		"not a number":   "rtp=lots,fednow=1",
	} {
		if _, err := ParseInstantRailLimits(s); err == nil || !strings.Contains(err.Error(), "INSTANT_RAIL_LIMITS") {
			t.Errorf("%s (%q): %v, want an error naming INSTANT_RAIL_LIMITS", name, s, err)
		}
	}
}

func TestLoadInstantRailLimits(t *testing.T) {
	c, err := Load(env(map[string]string{"DATA_DIR": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	if c.InstantRailLimits["fednow"] != 50_000_000 || c.InstantRailLimits["rtp"] != 1_000_000_000 {
		t.Errorf("default limits = %v", c.InstantRailLimits)
	}
	c, err = Load(env(map[string]string{"DATA_DIR": t.TempDir(), "INSTANT_RAIL_LIMITS": "rtp=100.00,fednow=50.00"}))
	if err != nil || c.InstantRailLimits["fednow"] != 5000 {
		t.Errorf("set limits = %v, %v", c.InstantRailLimits, err)
	}
	if _, err := Load(env(map[string]string{"DATA_DIR": t.TempDir(), "INSTANT_RAIL_LIMITS": "rtp=1"})); err == nil {
		t.Error("a limit list without fednow was accepted")
	}
}
