// Package sanctions screens names against the Treasury's list of Specially
// Designated Nationals (OFAC's SDN list): US persons may not send money to
// a name on it, so a customer whose name resembles one is held for an
// operator's review rather than refused or paid.
//
// The list is read from its published CSV form (sdn.csv: ent_num,
// SDN_Name, SDN_Type, Program, …; no header; "-0-" for an empty field)
// named by OFAC_SDN_FILE, or from an embedded sample of fictitious names
// that the sandbox documents, so that a merchant can rehearse a match.
//
// Similarity is Jaro–Winkler over normalized names (letters folded to
// ASCII, lower case, punctuation dropped, spaces collapsed), computed by
// github.com/adrg/strutil: a small, well-kept library of string metrics
// with no dependencies of its own, whose Jaro–Winkler is the textbook
// one (prefix bonus 0.1 over at most 4 letters), which is what screening
// vendors and OFAC's own search tool use. A name scores at Threshold
// (0.92) or more is a potential match.
//
// SDN names of individuals are written "LAST, First"; customers give
// first and last name apart. Each individual entry is indexed under both
// orders ("first last" and "last first"), and an entity under its name, so
// a customer's "first last" meets the entry whichever way it was written.
//
// The index keeps screening under a millisecond without comparing a name
// against every entry with full Jaro–Winkler. It cannot miss a match,
// because it only leaves out names whose similarity is provably below the
// threshold. For strings a (length la) and b (length lb), Jaro is
// (m/la + m/lb + (m-t)/m)/3 where m, the matching characters, is at most
// the letters the two have in common counted with multiplicity (c), so
// Jaro ≤ (c/la + c/lb + 1)/3; Jaro–Winkler adds at most 0.4·(1−Jaro)
// (four prefix letters at 0.1), so JW ≤ 0.4 + 0.6·Jaro. Hence a name can
// reach 0.92 only when Jaro can reach 0.8666…, which needs
// (c/la + c/lb + 1)/3 ≥ 0.8666…. With c ≤ min(la, lb) that already
// rules out lengths whose ratio is below 0.6, so entries are kept sorted
// by length and only the window [0.6·la, la/0.6] is visited. In it, c is
// bounded three ways, each cheaper than the next and each an upper bound:
// by the letters one name has and the other lacks (two popcounts of
// 27-bit letter sets: every letter missing from the other name costs at
// least one character), by 27-letter histograms stored per entry (the sum
// of the smaller counts), and the prefix bonus by the names' real common
// prefix (at most four letters) rather than four. Only a name whose
// bound still reaches the threshold is compared with the full metric.
package sanctions

import (
	"bufio"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/adrg/strutil/metrics"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Threshold is the least Jaro–Winkler similarity that is a potential match.
const Threshold = 0.92

// Entry is one SDN list entry.
type Entry struct {
	Num     string `json:"ent_num"`  // OFAC's entry number
	Name    string `json:"sdn_name"` // as published: "LAST, First" for individuals
	Type    string `json:"sdn_type"` // "individual", "vessel", "aircraft" or "" (an entity)
	Program string `json:"program"`
}

// Match is the best entry a name resembles, with its similarity (0..1).
type Match struct {
	Entry Entry   `json:"sdn_entry"`
	Score float64 `json:"score"`
}

// variant is one indexed spelling of an entry.
type variant struct {
	name  string
	runes int
	hist  [27]uint16 // a–z, and everything else (digits, spaces)
	mask  uint32     // bit k: hist[k] > 0
	entry int32
}

// List is a loaded SDN list with its index; safe for concurrent use.
type List struct {
	entries  []Entry
	variants []variant // sorted by runes
}

//go:embed sample.csv
var sample []byte

// Embedded returns the embedded sample list of fictitious names.
func Embedded() *List {
	l, err := Load(strings.NewReader(string(sample)))
	if err != nil {
		panic(fmt.Sprintf("sanctions: embedded sample: %v", err))
	}
	return l
}

// Open loads the list in path, or the embedded sample when path is "".
func Open(path string) (*List, error) {
	if path == "" {
		return Embedded(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("OFAC_SDN_FILE: %w", err)
	}
	defer f.Close()
	l, err := Load(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("OFAC_SDN_FILE %s: %w", path, err)
	}
	return l, nil
}

// Load reads a list in sdn.csv form. A record needs at least ent_num and
// SDN_Name; a last line holding only the end-of-file marker (a control-Z
// that older downloads carry) is skipped.
func Load(r io.Reader) (*List, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	l := &List{}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sdn list: %w", err)
		}
		if len(rec) == 1 && strings.Trim(rec[0], "\x1a \t") == "" {
			continue
		}
		if len(rec) < 2 {
			return nil, fmt.Errorf("sdn list: line %d: want ent_num and SDN_Name, got %d fields", line, len(rec))
		}
		e := Entry{Num: strings.TrimSpace(rec[0]), Name: field(rec[1])}
		if len(rec) > 2 {
			e.Type = field(rec[2])
		}
		if len(rec) > 3 {
			e.Program = field(rec[3])
		}
		if e.Name == "" {
			continue
		}
		l.add(e)
	}
	sort.Slice(l.variants, func(i, j int) bool { return l.variants[i].runes < l.variants[j].runes })
	return l, nil
}

// field is a CSV field with OFAC's "-0-" for empty read as "".
func field(s string) string {
	s = strings.TrimSpace(s)
	if s == "-0-" {
		return ""
	}
	return s
}

func (l *List) add(e Entry) {
	idx := int32(len(l.entries))
	l.entries = append(l.entries, e)
	names := []string{Normalize(e.Name)}
	if last, first, ok := strings.Cut(e.Name, ","); ok && strings.EqualFold(e.Type, "individual") {
		names = []string{Normalize(first + " " + last), Normalize(last + " " + first)}
	}
	for i, n := range names {
		if n == "" || (i > 0 && n == names[0]) {
			continue
		}
		l.variants = append(l.variants, newVariant(n, idx))
	}
}

func newVariant(n string, entry int32) variant {
	v := variant{name: n, runes: len(n), entry: entry} // normalized names are ASCII
	for i := 0; i < len(n); i++ {
		k := 26
		if c := n[i]; c >= 'a' && c <= 'z' {
			k = int(c - 'a')
		}
		v.hist[k]++
		v.mask |= 1 << k
	}
	return v
}

// Len is the number of entries.
func (l *List) Len() int { return len(l.entries) }

// stripMarks hands out transformers that decompose (NFKD) and remove the
// nonspacing marks. A chained transformer keeps state between calls, so
// each use takes one of its own: names are folded by many requests at
// once.
var stripMarks = sync.Pool{New: func() any {
	return transform.Chain(norm.NFKD, runes.Remove(runes.In(unicode.Mn)))
}}

// withoutMarks is s decomposed, without its nonspacing marks.
func withoutMarks(s string) (string, error) {
	t := stripMarks.Get().(transform.Transformer)
	defer stripMarks.Put(t)
	out, _, err := transform.String(t, s)
	return out, err
}

// Normalize is the form names are compared in: letters folded to ASCII
// (marks removed), lower case, letters and digits only, words separated
// by one space. What cannot be folded separates words.
func Normalize(s string) string {
	folded, err := withoutMarks(s)
	if err != nil {
		folded = s
	}
	var b strings.Builder
	b.Grow(len(folded))
	space := false
	for _, r := range folded {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r == '\'' || r == '.':
			continue // O'Brien is obrien, "J.R." is jr
		default:
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// minJaro is the least Jaro similarity that Jaro–Winkler can lift to
// Threshold: JW ≤ 0.4 + 0.6·Jaro (see the package doc).
const minJaro = (Threshold - 0.4) / 0.6

// Screen returns the best match at or above Threshold among names (each
// a person's full name or a business name, in any order of its words),
// and whether there is one.
func (l *List) Screen(names ...string) (Match, bool) {
	jw := metrics.NewJaroWinkler()
	best, found := Match{}, false
	for _, raw := range names {
		q := Normalize(raw)
		if q == "" {
			continue
		}
		qv := newVariant(q, -1)
		la := float64(qv.runes)
		lo := sort.Search(len(l.variants), func(i int) bool { return float64(l.variants[i].runes) >= 0.6*la })
		for i := lo; i < len(l.variants) && float64(l.variants[i].runes)*0.6 <= la; i++ {
			v := &l.variants[i]
			lb := float64(v.runes)
			// Each letter one has and the other lacks is at least one
			// character that cannot match: a bound from two popcounts.
			bonus := 0.1 * float64(prefix(q, v.name))
			c := min(la-float64(bits.OnesCount32(qv.mask&^v.mask)), lb-float64(bits.OnesCount32(v.mask&^qv.mask)))
			if jb := jaroBound(c, la, lb); jb+bonus*(1-jb) < Threshold {
				continue
			}
			n := 0
			for k := range qv.hist {
				n += int(min(qv.hist[k], v.hist[k]))
			}
			jb := jaroBound(float64(n), la, lb)
			if jb+bonus*(1-jb) < Threshold {
				continue
			}
			score := jw.Compare(q, v.name)
			if score >= Threshold && (!found || score > best.Score) {
				best, found = Match{Entry: l.entries[v.entry], Score: score}, true
			}
		}
	}
	if found {
		best.Score = float64(int(best.Score*10000+0.5)) / 10000
	}
	return best, found
}

// jaroBound is the most Jaro similarity two strings of la and lb
// characters with at most c characters in common can have.
func jaroBound(c, la, lb float64) float64 {
	if c <= 0 {
		return 0
	}
	return (c/la + c/lb + 1) / 3
}

// prefix is the length of a's and b's common prefix, at most 4 (the
// letters Jaro–Winkler rewards).
func prefix(a, b string) int {
	n := 0
	for n < 4 && n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Screening statuses of a customer.
const (
	Clear          = "clear"
	PotentialMatch = "potential_match"
	// Cleared: an operator reviewed the potential match and cleared it;
	// the same entry does not hold the customer again.
	Cleared = "cleared"
)

// Screening is a customer's screening result.
type Screening struct {
	Status string `json:"status"`
	// SDNEntry and Score are the entry matched (potential_match, cleared).
	SDNEntry *Entry   `json:"sdn_entry,omitempty"`
	Score    *float64 `json:"score,omitempty"`
	// ClearedAt (UTC) and Note are the operator's clearance.
	ClearedAt *time.Time `json:"cleared_at,omitempty"`
	Note      *string    `json:"note,omitempty"`
}

// Of is the screening of a customer with names, given its screening
// until now (prev, Status "" when never screened): a match is a
// potential_match unless an operator cleared that same entry.
func (l *List) Of(prev Screening, names ...string) Screening {
	m, ok := l.Screen(names...)
	if !ok {
		return Screening{Status: Clear}
	}
	if prev.Status == Cleared && prev.SDNEntry != nil && prev.SDNEntry.Num == m.Entry.Num {
		return prev
	}
	e, score := m.Entry, m.Score
	return Screening{Status: PotentialMatch, SDNEntry: &e, Score: &score}
}
