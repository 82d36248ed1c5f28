package metadata

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
)

func keys(n int) Metadata {
	m := Metadata{}
	for i := range n {
		m["k"+strconv.Itoa(i)] = "v"
	}
	return m
}

func TestLimitsAtTheirEdges(t *testing.T) {
	for _, c := range []struct {
		name string
		m    Metadata
		ok   bool
	}{
		{"20 keys", keys(20), true},
		{"21 keys", keys(21), false},
		{"key of 40", Metadata{strings.Repeat("k", 40): "v"}, true},
		{"key of 41", Metadata{strings.Repeat("k", 41): "v"}, false},
		{"key of 40 runes, more bytes", Metadata{strings.Repeat("é", 40): "v"}, true},
		{"value of 500", Metadata{"k": strings.Repeat("v", 500)}, true},
		{"value of 501", Metadata{"k": strings.Repeat("v", 501)}, false},
		{"empty key", Metadata{"": "v"}, false},
		{"empty value is no key", Metadata{"k": ""}, true},
	} {
		_, err := New(c.m)
		if (err == nil) != c.ok {
			t.Errorf("%s: New = %v, want ok %v", c.name, err, c.ok)
		}
		if err != nil && (errs.CodeOf(err) != errs.InvalidRequest || err.(*errs.Error).Param != "metadata") {
			t.Errorf("%s: error %v, want invalid_request on metadata", c.name, err)
		}
	}
}

func TestApplyRemovesEmptyAndJudgesTheResult(t *testing.T) {
	cur := keys(20)
	// At 20 keys, removing one makes room for another.
	next, err := Apply(cur, Metadata{"k0": "", "new": "x"})
	if err != nil || len(next) != 20 || next["new"] != "x" || next["k0"] != "" {
		t.Fatalf("Apply = %v, %v", next, err)
	}
	if len(cur) != 20 || cur["new"] != "" {
		t.Errorf("Apply changed its input: %v", cur)
	}
	if _, err := Apply(cur, Metadata{"new": "x"}); err == nil {
		t.Error("a 21st key by update was taken")
	}
	if m, err := Apply(Metadata{"a": "1"}, Metadata{"a": ""}); err != nil || m != nil {
		t.Errorf("removing the last key = %v, %v; want none", m, err)
	}
}

func TestJSONAndColumn(t *testing.T) {
	b, _ := json.Marshal(struct{ M Metadata }{})
	if string(b) != `{"M":{}}` {
		t.Errorf("no metadata marshals as %s", b)
	}
	var m Metadata
	if err := m.Scan([]byte(`{"order":"42"}`)); err != nil || m["order"] != "42" {
		t.Errorf("Scan = %v, %v", m, err)
	}
	if err := m.Scan([]byte(`{}`)); err != nil || m != nil {
		t.Errorf("Scan {} = %v, %v", m, err)
	}
	if v, _ := Metadata(nil).Value(); v != "{}" {
		t.Errorf("Value of none = %v", v)
	}
}

func TestFilter(t *testing.T) {
	if _, err := Filter(map[string]string{"k": ""}); err == nil {
		t.Error("an empty filter value was taken")
	}
	if f, err := Filter(map[string]string{"order": "42"}); err != nil || f["order"] != "42" {
		t.Errorf("Filter = %v, %v", f, err)
	}
}
