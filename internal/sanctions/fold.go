package sanctions

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

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

// words are s's normalized words.
func words(s string) []string { return strings.Fields(Normalize(s)) }

// key is a surname or a business name as compared: its normalized words
// run together, so "Abu Zayd", "ABU-ZAYD" and "AbuZayd" are one key.
func key(ws []string) string { return strings.Join(ws, "") }

// legalForms are the words and phrases that say what kind of company a
// business is rather than which one: they are set aside at either end of
// a business name ("KESTREL TRADING FZE" is "kestrel trading";
// "LIMITED LIABILITY COMPANY SOVFRACHT" is "sovfracht"). Phrases are
// normalized words; a word that is only a legal form inside a phrase
// ("sdn" of "sdn bhd") is not one alone.
var legalForms = phrases(
	"ltd", "llc", "inc", "co", "corp", "corporation", "incorporated", "limited", "company", "companies",
	"fze", "fzco", "fzc", "fz", "fzllc", "llp", "lp", "plc", "pllc",
	"sa", "sas", "sarl", "srl", "spa", "sl", "ltda", "cia", "sac", "saa", "de cv", "s de rl", "sapi",
	"ag", "gmbh", "kg", "bv", "nv", "ab", "oy", "as", "asa", "aps", "kft", "sro", "doo", "ad",
	"jsc", "ojsc", "pjsc", "cjsc", "oao", "ooo", "zao", "pao", "ao", "tov", "too",
	"pte", "pvt", "pty", "sdn bhd", "bhd", "tbk", "kk",
	"limited liability company", "limited liability partnership", "joint stock company",
	"public joint stock company", "open joint stock company", "closed joint stock company",
	"private limited",
)

// phrases are ps as words, longest first, so that a phrase is set aside
// whole before a word of it is ("limited liability company" before
// "limited").
func phrases(ps ...string) [][]string {
	out := make([][]string, len(ps))
	for i, p := range ps {
		out[i] = strings.Fields(p)
	}
	slices.SortStableFunc(out, func(a, b []string) int { return len(b) - len(a) })
	return out
}

// businessWords are a business name's words without its legal forms at
// either end; a name that is nothing but legal forms keeps its words.
func businessWords(ws []string) []string {
	lo, hi := 0, len(ws)
	for changed := true; changed && hi > lo; {
		changed = false
		for _, p := range legalForms {
			n := len(p)
			if hi-lo > n && equal(ws[hi-n:hi], p) {
				hi, changed = hi-n, true
			}
			if hi-lo > n && equal(ws[lo:lo+n], p) {
				lo, changed = lo+n, true
			}
		}
	}
	return ws[lo:hi]
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
