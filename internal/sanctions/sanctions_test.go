package sanctions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/adrg/strutil/metrics"
)

// sdnRecord is one record in sdn.csv's layout: 12 fields, the name and
// the program quoted, "-0- " (with its trailing space, as published) for
// the empty fields.
func sdnRecord(num int, name, kind, programs, remarks string) string {
	null := "-0- "
	if kind == "" {
		kind = null
	}
	if remarks == "" {
		remarks = null
	} else {
		remarks = quoted(remarks)
	}
	return fmt.Sprintf("%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\r\n", num, quoted(name), kind, quoted(programs), null, null, null, null, null, null, null, remarks)
}

// quoted is s as a quoted CSV field: its quotes doubled.
func quoted(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// altRecord is one record in alt.csv's layout.
func altRecord(num, altNum int, kind, name string) string {
	return fmt.Sprintf("%d,%d,%s,%s,-0- \r\n", num, altNum, quoted(kind), quoted(name))
}

// testList is a small list in the published layouts: individuals with
// middle names and patronymics, one with a given name many people share,
// aliases, entities with legal forms, a vessel.
func testList(t *testing.T) *List {
	t.Helper()
	sdn := sdnRecord(1001, "KARIMOV, Rustam Bakhtiyorovich", "individual", "SDGT] [SYRIA", "DOB 12 Mar 1971; nationality Uzbekistan.") +
		sdnRecord(1002, "AL-RASHIDI, Omar Farouk Abdullah", "individual", "SDGT", "") +
		sdnRecord(1003, "TUFAIL, Mohammed", "individual", "SDGT", "") +
		sdnRecord(1004, "HALVORSEN MARINE TRADING LLC", "", "IRAN", "Website www.example.com.") +
		sdnRecord(1005, "NORDVIK, Ingrid Solveig", "individual", "RUSSIA-EO14024", "") +
		sdnRecord(1006, "ZARECHNY HOLDINGS CO., LTD.", "", "CAATSA - RUSSIA] [UKRAINE-EO13662", "") +
		sdnRecord(1007, "OCEAN PEARL", "vessel", "IRAN", "") +
		sdnRecord(1008, `LIMITED LIABILITY COMPANY "SOVTRANSIT NORD"`, "", "RUSSIA-EO14024", `Organization Type: "Freight"`) +
		"\x1a"
	alt := altRecord(1001, 501, "aka", "KARIMOFF, Rustem") +
		altRecord(1005, 502, "aka", "BERGSTROM, Inga") +
		altRecord(1006, 503, "fka", "ZARECHNY GROUP FZE") +
		altRecord(1002, 504, "aka", "Abu Omar al-Baghdadi") +
		altRecord(9999, 505, "aka", "NOT LISTED, Anyone") // an alias of no entry of this list
	l, err := Load(strings.NewReader(sdn), strings.NewReader(alt))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Len(), 8; got != want {
		t.Fatalf("entries: got %d, want %d", got, want)
	}
	if got, want := l.Aliases(), 4; got != want {
		t.Fatalf("aliases: got %d, want %d", got, want)
	}
	return l
}

func TestScreenPerson(t *testing.T) {
	l := testList(t)
	for _, tc := range []struct {
		given, surname string
		match          string // ent_num, "" for clear
	}{
		{"Rustam", "Karimov", "1001"},         // without the patronymic
		{"Rustam Ali", "Karimov", "1001"},     // the customer's middle name is not compared
		{"Bakhtiyorovich", "Karimov", "1001"}, // a listed middle name is one of the given names
		{"RUSTAM", "Kárímov", "1001"},         // case and marks
		{"Omar", "Al Rashidi", "1002"},        // punctuation and spaces
		{"Farouk", "Alrashidi", "1002"},       //
		{"Rustem", "Karimoff", "1001"},        // an alias
		{"Inga", "Bergström", "1005"},         // an alias
		{"Ingrid", "Bergstrom", ""},           // an alias is a name of its own, not a surname for the entry's given names
		{"Mohammed", "Ali", ""},               // a shared given name alone
		{"Mohammed", "Tufail", "1003"},        //
		{"Ali", "Mohammed", ""},               // names the other way round
		{"Karimov", "Rustam", ""},             //
		{"Rustam", "", ""},                    // a given name without surname
		{"", "Karimov", ""},                   // a surname without given name
		{"Ivan", "Karimov", ""},               // the surname alone
		{"Halvorsen", "Marine Trading", ""},   // an entity is no person
		{"Ocean", "Pearl", ""},                // nor is a vessel
		{"Omar", "Baghdadi", "1002"},          // an alias without a comma: its last word is the surname
		{"Abu", "Omar al-Baghdadi", "1002"},   // or its last words
		{"Anyone", "Not Listed", ""},          // an alias of no entry is left out
		{"Rustam Bakhtiyorovich", "Karimov", "1001"},
	} {
		m, ok := l.Screen(Person(tc.given, tc.surname))
		if got := map[bool]string{true: m.Entry.Num, false: ""}[ok]; got != tc.match {
			t.Errorf("%q %q: got %q (%+v), want %q", tc.given, tc.surname, got, m, tc.match)
		}
		if ok && m.Score < Threshold {
			t.Errorf("%q %q: score %v below the threshold", tc.given, tc.surname, m.Score)
		}
	}
}

// TestScreenAtTheThreshold screens misspellings whose similarity the test
// computes first: at 0.92 and over they match, just under they do not.
func TestScreenAtTheThreshold(t *testing.T) {
	l := testList(t)
	jw := metrics.NewJaroWinkler()
	for _, tc := range []struct {
		name       string
		listed, as string // the keys compared
		screen     Name
		match      bool
	}{
		{"surname over", "karimov", "kaaimov", Person("Rustam", "Kaaimov"), true},
		{"surname under", "karimov", "kamiov", Person("Rustam", "Kamiov"), false},
		{"surname over", "alrashidi", "lrashidi", Person("Omar", "L'Rashidi"), true},
		{"surname under", "alrashidi", "alrbhidi", Person("Omar", "Alrbhidi"), false},
		{"given over", "rustam", "russam", Person("Russam", "Karimov"), true},
		{"given under", "nordvik", "novdik", Person("Ingrid", "Novdik"), false},
		{"business over", "halvorsenmarinetrading", "halosenmarinetrading", Business("Halosen Marine Trading"), true},
		{"business under", "halvorsenmarinetrading", "alvorsnmarinetrading", Business("Alvorsn Marine Trading Inc."), false},
	} {
		s := jw.Compare(tc.listed, tc.as)
		if tc.match && (s < Threshold || s >= Threshold+0.005) || !tc.match && (s >= Threshold || s < Threshold-0.005) {
			t.Fatalf("%s: %q against %q is %.5f, not at the edge the case is for", tc.name, tc.as, tc.listed, s)
		}
		m, ok := l.Screen(tc.screen)
		if ok != tc.match {
			t.Errorf("%s (%q, %.5f): matched %v (%+v), want %v", tc.name, tc.as, s, ok, m, tc.match)
		}
	}
}

func TestScreenBusiness(t *testing.T) {
	l := testList(t)
	for _, tc := range []struct {
		name  string
		match string
	}{
		{"Halvorsen Marine Trading LLC", "1004"},
		{"Halvorsen Marine Trading", "1004"}, // without its legal form
		{"HALVORSEN MARINE TRADING, L.L.C.", "1004"},
		{"Halvorsen Marine Trading GmbH", "1004"}, // another legal form
		{"Zarechny Holdings", "1006"},
		{"Zarechny Holdings Company Limited", "1006"},
		{"Zarechny Group", "1006"},     // an alias without its FZE
		{"Zarechny Group FZE", "1006"}, //
		{"Sovtransit Nord", "1008"},    // a legal form before the name, the name in quotes
		{"OOO Sovtransit Nord", "1008"},
		{"Sovtransit Nord LLC", "1008"},
		{"Halvorsen Bakery LLC", ""},
		{"Ocean Pearl LLC", ""}, // a vessel is no business
		{"Rustam Karimov", ""},  // nor a person
		{"LLC", ""},
	} {
		m, ok := l.Screen(Business(tc.name))
		if got := map[bool]string{true: m.Entry.Num, false: ""}[ok]; got != tc.match {
			t.Errorf("%q: got %q (%+v), want %q", tc.name, got, m, tc.match)
		}
	}
}

func TestScreenWritten(t *testing.T) {
	l := testList(t)
	for name, want := range map[string]string{
		"RUSTAM KARIMOV":               "1001",
		"KARIMOV, RUSTAM":              "1001",
		"Rustam B Karimov":             "1001",
		"Omar Farouk Al-Rashidi":       "1002",
		"MOHAMMED ALI":                 "",
		"MOHAMMED":                     "",
		"Ingrid Solveig Berg":          "",
		"Ingrid Solveig Nordvik":       "1005",
		"Zarechny Holdings Co Ltd":     "",
		"Bergstrom Inga":               "",
		"INGA BERGSTROM":               "1005",
		"Omar Farouk Abdullah Rashidi": "",
	} {
		m, ok := l.Screen(Written(name))
		if got := map[bool]string{true: m.Entry.Num, false: ""}[ok]; got != want {
			t.Errorf("%q: got %q (%+v), want %q", name, got, m, want)
		}
	}
}

func TestScreeningCarriesPrograms(t *testing.T) {
	l := testList(t)
	sc := l.Of(Screening{}, Person("Rustam", "Karimov"))
	if sc.Status != PotentialMatch || !reflect.DeepEqual(sc.Programs, []string{"SDGT", "SYRIA"}) || sc.Listed != "KARIMOV, Rustam Bakhtiyorovich" {
		t.Fatalf("screening: got %+v", sc)
	}
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"programs":["SDGT","SYRIA"]`) || strings.Contains(string(b), "] [") {
		t.Errorf("json: %s", b)
	}
	sc = l.Of(Screening{}, Business("Zarechny Group"))
	if want := []string{"CAATSA - RUSSIA", "UKRAINE-EO13662"}; !reflect.DeepEqual(sc.Programs, want) || sc.Listed != "ZARECHNY GROUP FZE" {
		t.Errorf("alias screening: got %+v, want programs %q", sc, want)
	}
}

// TestScreeningReadsTheRawProgramStoredBefore: a screening stored with
// the entry's raw program field reads with its programs as a list.
func TestScreeningReadsTheRawProgramStoredBefore(t *testing.T) {
	var sc Screening
	stored := `{"status":"potential_match","sdn_entry":{"ent_num":"1001","sdn_name":"KARIMOV, Rustam","sdn_type":"individual","program":"SDGT] [SYRIA"},"score":1}`
	if err := json.Unmarshal([]byte(stored), &sc); err != nil {
		t.Fatal(err)
	}
	if sc.Status != PotentialMatch || sc.SDNEntry == nil || sc.SDNEntry.Num != "1001" || !reflect.DeepEqual(sc.Programs, []string{"SDGT", "SYRIA"}) || *sc.Score != 1 {
		t.Fatalf("got %+v", sc)
	}
	b, _ := json.Marshal(sc)
	if strings.Contains(string(b), `"program"`) {
		t.Errorf("written again with the raw program: %s", b)
	}
}

func TestParsePrograms(t *testing.T) {
	for in, want := range map[string][]string{
		"SDGT":                              {"SDGT"},
		"SDGT] [SYRIA":                      {"SDGT", "SYRIA"},
		"[SDGT] [IFSR]":                     {"SDGT", "IFSR"},
		"CAATSA - RUSSIA] [UKRAINE-EO13662": {"CAATSA - RUSSIA", "UKRAINE-EO13662"},
		"-0- ":                              nil,
	} {
		if got := ParsePrograms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParsePrograms(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestLoadRefusesWhatIsNotTheLayout(t *testing.T) {
	good := sdnRecord(1, "KARIMOV, Rustam", "individual", "SDGT", "")
	for name, tc := range map[string]struct{ sdn, alt, want string }{
		"empty":               {"", "", "no entries"},
		"only the eof marker": {"\x1a", "", "no entries"},
		"alt.csv as sdn.csv":  {altRecord(1, 2, "aka", "KARIMOFF, Rustem"), "", "line 1: 5 fields, not the 12"},
		"sdn.csv as alt.csv":  {good, good, "alt.csv: line 1: 12 fields, not the 5"},
		"short record":        {good + "2,\"X\",-0-,SDGT\n", "", "line 2: 4 fields"},
		"ent_num not number":  {strings.Replace(good, "1,", "A1,", 1), "", `ent_num "A1" is not a number`},
		"unknown type":        {sdnRecord(1, "X", "person", "SDGT", ""), "", `SDN_Type "person"`},
		"empty name":          {sdnRecord(1, "-0-", "", "SDGT", ""), "", "SDN_Name is empty"},
		"ent_num twice":       {good + good, "", "ent_num 1 appears twice"},
		"alt_num not number":  {good, "1,x,\"aka\",\"A, B\",-0-\n", `alt_num "x"`},
		"unknown alt_type":    {good, altRecord(1, 2, "alias", "A, B"), `alt_type "alias"`},
		"a header":            {"ent_num,SDN_Name,SDN_Type,Program,Title,Call_Sign,Vess_type,Tonnage,GRT,Vess_flag,Vess_owner,Remarks\n" + good, "", `ent_num "ent_num"`},
	} {
		var alt io.Reader
		if tc.alt != "" {
			alt = strings.NewReader(tc.alt)
		}
		_, err := Load(strings.NewReader(tc.sdn), alt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error saying %q", name, err, tc.want)
		}
	}
}

func TestEmbeddedSample(t *testing.T) {
	l := Embedded()
	for _, tc := range []struct {
		name  Name
		match string
	}{
		{Person("Mirela", "Drakovic"), "9000001"},
		{Person("MIRELA", "DRAKOVIĆ"), "9000001"},
		{Person("Mirela", "Drakovich"), "9000001"},
		{Person("Ilya Petrovich", "Volkanov"), "9000003"},
		{Person("Ilya", "Volkanov"), "9000003"},
		{Person("Hector Ramon", "Sandoval Quintero"), "9000005"},
		{Business("Kestrel Trading F.Z.E."), "9000002"},
		{Business("Orinoco Blue Shipping Ltd"), "9000004"},
		{Person("Jane", "Doe"), ""},
		{Person("Mira", "Draco"), ""},
		{Business("Kestrel Bakery"), ""},
	} {
		m, ok := l.Screen(tc.name)
		if got := map[bool]string{true: m.Entry.Num, false: ""}[ok]; got != tc.match {
			t.Errorf("%+v: got %q (%+v), want %q", tc.name, got, m, tc.match)
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
	sdn, alt := generated(2000, 1000, 7)
	l, err := Load(bytes.NewReader(sdn), bytes.NewReader(alt))
	if err != nil {
		t.Fatal(err)
	}
	s := l.cur.Load()
	rng := rand.New(rand.NewPCG(1, 2))
	jw := metrics.NewJaroWinkler()
	matches := 0
	for i := 0; i < 400; i++ {
		v := s.people.variants[rng.IntN(len(s.people.variants))]
		n := v.names[rng.IntN(len(v.names))]
		q := Person(mutate(rng, n.given[rng.IntN(len(n.given))]), mutate(rng, v.key))
		want, wantOK := 0.0, false
		for _, w := range s.people.variants {
			sur := jw.Compare(q.surnames[0], w.key)
			if sur < Threshold {
				continue
			}
			for _, n := range w.names {
				if g, ok := givenAlike(jw, q.given, n.given); ok && min(sur, g) > want {
					want, wantOK = min(sur, g), true
				}
			}
		}
		m, ok := l.Screen(q)
		if ok != wantOK || (ok && m.Score != float64(int(want*10000+0.5))/10000) {
			t.Fatalf("%+v: index got %v %v, full scan %v %v", q, m.Score, ok, want, wantOK)
		}
		if ok {
			matches++
		}
	}
	if matches < 40 || matches > 360 {
		t.Fatalf("the mutations gave %d matches of 400: the test does not tell the two apart", matches)
	}
}

// mutate changes a few letters of s, sometimes many.
func mutate(rng *rand.Rand, s string) string {
	b := []byte(s)
	n := rng.IntN(3)
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

// generated is an sdn.csv of n entries, individuals with middle names and
// entities like the Treasury's (of about its size for 15,000 entries),
// and an alt.csv of aliases of them.
func generated(n, aliases int, seed uint64) (sdn, alt []byte) {
	rng := rand.New(rand.NewPCG(seed, seed))
	var b bytes.Buffer
	for i := range n {
		if i%3 == 0 {
			b.WriteString(sdnRecord(i+1, word(rng)+" "+word(rng)+" LTD", "", "SDGT] [IRAN", ""))
			continue
		}
		// Remarks as long as the Treasury's usually are.
		remarks := fmt.Sprintf("DOB %02d %s %d; POB %s, %s; nationality %s; Passport %09d (%s) expires 2030; Gender Male; Secondary sanctions risk: section 1(b) of Executive Order 13224, as amended.",
			1+i%28, "Jan", 1950+i%50, word(rng), word(rng), word(rng), rng.IntN(1e9), word(rng))
		b.WriteString(sdnRecord(i+1, word(rng)+", "+word(rng)+" "+word(rng), "individual", "SDGT", remarks))
	}
	var a bytes.Buffer
	for i := range aliases {
		num := 1 + rng.IntN(n)
		name := word(rng) + ", " + word(rng)
		if (num-1)%3 == 0 {
			name = word(rng) + " " + word(rng) + " FZE"
		}
		a.WriteString(altRecord(num, i+1, "aka", name))
	}
	return b.Bytes(), a.Bytes()
}

// BenchmarkLoad loads a list of the Treasury's size (target: under a
// second).
func BenchmarkLoad(b *testing.B) {
	sdn, alt := generated(15000, 10000, 1)
	b.SetBytes(int64(len(sdn) + len(alt)))
	for b.Loop() {
		if _, err := Load(bytes.NewReader(sdn), bytes.NewReader(alt)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScreen screens one person's name against a list of the
// Treasury's size (target: under a millisecond).
func BenchmarkScreen(b *testing.B) {
	sdn, alt := generated(15000, 10000, 1)
	l, err := Load(bytes.NewReader(sdn), bytes.NewReader(alt))
	if err != nil {
		b.Fatal(err)
	}
	name := Person("Alkama Sadeni", "Ribenor")
	for b.Loop() {
		l.Screen(name)
	}
}

// BenchmarkScreenWritten screens a name written in one string (an ACH
// entry's), whose each run of last words is a surname to try.
func BenchmarkScreenWritten(b *testing.B) {
	sdn, alt := generated(15000, 10000, 1)
	l, err := Load(bytes.NewReader(sdn), bytes.NewReader(alt))
	if err != nil {
		b.Fatal(err)
	}
	name := Written("ALKAMA SADENI RIBENOR KOLA")
	for b.Loop() {
		l.Screen(name)
	}
}

// BenchmarkScreenBusiness screens one business name likewise.
func BenchmarkScreenBusiness(b *testing.B) {
	sdn, alt := generated(15000, 10000, 1)
	l, err := Load(bytes.NewReader(sdn), bytes.NewReader(alt))
	if err != nil {
		b.Fatal(err)
	}
	name := Business("Alkama Ribenor Trading LLC")
	for b.Loop() {
		l.Screen(name)
	}
}
