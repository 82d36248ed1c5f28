package sanctions

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/adrg/strutil/metrics"
)

func TestLoadReadsOFACForm(t *testing.T) {
	csv := "36,\"AEROCARIBBEAN AIRLINES\",-0-,CUBA,-0-,-0-,-0-,-0-,-0-,-0-,-0-,-0-\n" +
		"173,\"ANGLO-CARIBBEAN CO., LTD.\",-0-,CUBA,-0-,-0-,-0-,-0-,-0-,-0-,-0-,-0-\n" +
		"2674,\"ABU ZAYD, Hamad\",individual,SDGT,-0-,-0-,-0-,-0-,-0-,-0-,-0-,\"DOB 1950.\"\n\x1a\n"
	l, err := Load(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Len(), 3; got != want {
		t.Fatalf("entries: got %d, want %d", got, want)
	}
	m, ok := l.Screen("Hamad Abu Zayd")
	if !ok || m.Entry.Num != "2674" || m.Entry.Type != "individual" || m.Score != 1 {
		t.Fatalf("Hamad Abu Zayd: got %+v %v, want entry 2674 at 1", m, ok)
	}
	if m, ok := l.Screen("Anglo Caribbean Co Ltd"); !ok || m.Entry.Num != "173" || m.Entry.Program != "CUBA" {
		t.Fatalf("entity: got %+v %v", m, ok)
	}
}

func TestLoadRefusesARecordWithoutName(t *testing.T) {
	if _, err := Load(strings.NewReader("12\n")); err == nil {
		t.Fatal("a record with only ent_num loaded")
	}
}

func TestScreen(t *testing.T) {
	l := Embedded()
	for _, tc := range []struct {
		name  string
		match string // ent_num, "" for clear
	}{
		{"Mirela Drakovic", "9000001"},
		{"Drakovic Mirela", "9000001"},  // either order
		{"MIRELA DRAKOVIĆ", "9000001"},  // marks and case
		{"Mirela Drakovich", "9000001"}, // a spelling away
		{"Kestrel Trading F.Z.E.", "9000002"},
		{"Ilya Petrovich Volkanov", "9000003"},
		{"Jane Doe", ""},
		{"Mira Draco", ""},
		{"Kestrel Bakery", ""},
	} {
		m, ok := l.Screen(tc.name)
		if got := map[bool]string{true: m.Entry.Num, false: ""}[ok]; got != tc.match {
			t.Errorf("%q: got %q (%+v), want %q", tc.name, got, m, tc.match)
		}
		if ok && m.Score < Threshold {
			t.Errorf("%q: score %v below the threshold", tc.name, m.Score)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"  José  Ñúñez-García ": "jose nunez garcia",
		"O'Brien, J.R.":         "obrien jr",
		"ACME, Inc.":            "acme inc",
		"":                      "",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q): got %q, want %q", in, got, want)
		}
	}
}

// TestScreenMissesNoMatchOfTheFullScan compares the index with the full
// scan it replaces: for random names near and far from the list's, both
// find the same best score.
func TestScreenMissesNoMatchOfTheFullScan(t *testing.T) {
	data := generated(2000, 7)
	l, err := Load(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	jw := metrics.NewJaroWinkler()
	matches := 0
	for i := 0; i < 400; i++ {
		v := l.variants[rng.IntN(len(l.variants))].name
		q := mutate(rng, v)
		want, wantOK := 0.0, false
		for _, w := range l.variants {
			if s := jw.Compare(Normalize(q), w.name); s >= Threshold && s > want {
				want, wantOK = s, true
			}
		}
		m, ok := l.Screen(q)
		if ok != wantOK || (ok && m.Score != float64(int(want*10000+0.5))/10000) {
			t.Fatalf("%q: index got %v %v, full scan %v %v", q, m.Score, ok, want, wantOK)
		}
		if ok {
			matches++
		}
	}
	if matches == 0 || matches == 400 {
		t.Fatalf("the mutations gave %d matches of 400: the test does not tell the two apart", matches)
	}
}

// mutate changes a few letters of s, sometimes many.
func mutate(rng *rand.Rand, s string) string {
	b := []byte(s)
	n := rng.IntN(4)
	if rng.IntN(5) == 0 {
		n = len(b) / 2
	}
	for range n {
		b[rng.IntN(len(b))] = byte('a' + rng.IntN(26))
	}
	if rng.IntN(3) == 0 && len(b) > 4 {
		b = b[:len(b)-rng.IntN(3)]
	}
	return string(b)
}

var syllables = strings.Fields("al an ar ba be da de el en ha ib ka ko la li ma mi mo na ni no or ra re ri sa se sh ta to va vi ya za zu")

func word(rng *rand.Rand) string {
	var b strings.Builder
	for range 2 + rng.IntN(3) {
		b.WriteString(syllables[rng.IntN(len(syllables))])
	}
	return strings.ToUpper(b.String())
}

// generated is an sdn.csv of n entries, individuals and entities like
// the Treasury's.
func generated(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	var b bytes.Buffer
	for i := range n {
		if i%3 == 0 {
			fmt.Fprintf(&b, "%d,\"%s %s %s\",-0-,SDGT,-0-,-0-,-0-,-0-,-0-,-0-,-0-,-0-\n", i+1, word(rng), word(rng), "LTD")
			continue
		}
		fmt.Fprintf(&b, "%d,\"%s, %s %s\",individual,SDGT,-0-,-0-,-0-,-0-,-0-,-0-,-0-,\"DOB %d.\"\n", i+1, word(rng), word(rng), word(rng), 1950+i%50)
	}
	return b.Bytes()
}

// TestLoadAndScreenAreFast holds the list's size to its purpose: the
// Treasury's ~18,000 entries load in under a second and a name screens
// in under a millisecond (with room for a slow, shared machine).
func TestLoadAndScreenAreFast(t *testing.T) {
	data := generated(18000, 1)
	start := time.Now()
	l, err := Load(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("loading 18,000 entries took %v, want under a second", d)
	}
	names := []string{"Mirela Drakovic", "Alkama Ribenor", "Kestrel Trading", "Jonathan Q Smithers"}
	start = time.Now()
	const rounds = 50
	for range rounds {
		l.Screen(names...)
	}
	if per := time.Since(start) / (rounds * time.Duration(len(names))); per > time.Millisecond {
		t.Errorf("screening a name took %v, want under a millisecond", per)
	}
}

func BenchmarkLoad(b *testing.B) {
	data := generated(18000, 1)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Load(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScreen(b *testing.B) {
	l, err := Load(bytes.NewReader(generated(18000, 1)))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		l.Screen("Alkama Ribenor Sadeni")
	}
}
