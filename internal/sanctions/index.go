package sanctions

import (
	"math/bits"
	"sort"

	"github.com/adrg/strutil/metrics"
)

// The index holds each distinct key once (a surname that many listed
// people share, a business name), with the listed names that carry it,
// and compares a name's key only with keys that could reach the
// threshold. For strings a (length la) and b (length lb), Jaro is
// (m/la + m/lb + (m-t)/m)/3 where m, the matching characters, is at most
// the letters the two have in common counted with multiplicity (c), so
// Jaro ≤ (c/la + c/lb + 1)/3; Jaro–Winkler adds at most 0.4·(1−Jaro)
// (four prefix letters at 0.1), so JW ≤ 0.4 + 0.6·Jaro. Hence a key can
// reach 0.92 only when Jaro can reach 0.8666…, which needs
// (c/la + c/lb + 1)/3 ≥ 0.8666…. With c ≤ min(la, lb) that already
// rules out lengths whose ratio is below 0.6, so keys are kept sorted by
// length and only the window [0.6·la, la/0.6] is visited. In it, c is
// bounded three ways, each cheaper than the next and each an upper bound:
// by the letters one key has and the other lacks (two popcounts of
// 27-bit letter sets: every letter missing from the other key costs at
// least one character), by 27-letter histograms stored per key (the sum
// of the smaller counts), and the prefix bonus by the keys' real common
// prefix (at most four letters) rather than four. Only a key whose bound
// still reaches the threshold is compared with the full metric.

// listed is one listed name carrying a key: its entry, the name as
// published, and for a person the keys of its given names.
type listed struct {
	entry int32
	name  string
	given []string
}

// variant is one indexed key with the listed names that carry it.
type variant struct {
	key   string
	runes int
	hist  [27]uint16 // a–z, and everything else (digits)
	mask  uint32     // bit k: hist[k] > 0
	names []listed
}

// index is a set of keys sorted by length.
type index struct {
	variants []variant
	at       map[string]int // key → variant while building; nil after
}

func (x *index) add(k string, n listed) {
	if x.at == nil {
		x.at = map[string]int{}
	}
	i, ok := x.at[k]
	if !ok {
		i = len(x.variants)
		x.at[k] = i
		x.variants = append(x.variants, newVariant(k))
	}
	x.variants[i].names = append(x.variants[i].names, n)
}

// done sorts the keys by length (counting them by length, then placing
// each, so that the large variants move once), once every key is added.
func (x *index) done() {
	var at []int
	for _, v := range x.variants {
		for len(at) <= v.runes+1 {
			at = append(at, 0)
		}
		at[v.runes+1]++
	}
	for i := 1; i < len(at); i++ {
		at[i] += at[i-1]
	}
	sorted := make([]variant, len(x.variants))
	for i := range x.variants {
		n := x.variants[i].runes
		sorted[at[n]] = x.variants[i]
		at[n]++
	}
	x.variants, x.at = sorted, nil
}

func newVariant(k string) variant {
	v := variant{key: k, runes: len(k)} // keys are ASCII
	for i := 0; i < len(k); i++ {
		c := 26
		if b := k[i]; b >= 'a' && b <= 'z' {
			c = int(b - 'a')
		}
		v.hist[c]++
		v.mask |= 1 << c
	}
	return v
}

// alike calls fn with each key of x at least Threshold similar to q, and
// the similarity.
func (x *index) alike(jw *metrics.JaroWinkler, q string, fn func(v *variant, score float64)) {
	if q == "" {
		return
	}
	qv := newVariant(q)
	la := float64(qv.runes)
	vs := x.variants
	lo := sort.Search(len(vs), func(i int) bool { return float64(vs[i].runes) >= 0.6*la })
	for i := lo; i < len(vs) && float64(vs[i].runes)*0.6 <= la; i++ {
		v := &vs[i]
		lb := float64(v.runes)
		// Each letter one has and the other lacks is at least one
		// character that cannot match: a bound from two popcounts.
		bonus := 0.1 * float64(prefix(q, v.key))
		c := min(la-float64(bits.OnesCount32(qv.mask&^v.mask)), lb-float64(bits.OnesCount32(v.mask&^qv.mask)))
		if jb := jaroBound(c, la, lb); jb+bonus*(1-jb) < Threshold {
			continue
		}
		n := 0
		for k := range qv.hist {
			n += int(min(qv.hist[k], v.hist[k]))
		}
		if jb := jaroBound(float64(n), la, lb); jb+bonus*(1-jb) < Threshold {
			continue
		}
		if score := jw.Compare(q, v.key); score >= Threshold {
			fn(v, score)
		}
	}
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

// Screen returns the best match among names, and whether there is one.
func (l *List) Screen(names ...Name) (Match, bool) {
	s := l.cur.Load()
	jw := metrics.NewJaroWinkler()
	best, found := Match{}, false
	consider := func(n listed, score float64) {
		if !found || score > best.Score {
			best, found = Match{Entry: s.entries[n.entry], Listed: n.name, Score: score}, true
		}
	}
	for _, name := range names {
		for _, sur := range name.surnames {
			s.people.alike(jw, sur, func(v *variant, score float64) {
				for _, n := range v.names {
					if g, ok := givenAlike(jw, name.given, n.given); ok {
						consider(n, min(score, g))
					}
				}
			})
		}
		s.businesses.alike(jw, name.business, func(v *variant, score float64) {
			for _, n := range v.names {
				consider(n, score)
			}
		})
	}
	if found {
		best.Score = float64(int(best.Score*10000+0.5)) / 10000
	}
	return best, found
}

// givenAlike is the best similarity of given to one of names, when one
// reaches the threshold.
func givenAlike(jw *metrics.JaroWinkler, given string, names []string) (float64, bool) {
	best := 0.0
	for _, n := range names {
		if s := jw.Compare(given, n); s > best {
			best = s
		}
	}
	return best, best >= Threshold
}
