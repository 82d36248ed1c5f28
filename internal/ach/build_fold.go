package ach

import (
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// NACHA records hold printable ASCII only. Names and descriptions reach
// the service in any script, so they are folded letter by letter: a
// letter with marks loses its marks (canonical decomposition, then the
// nonspacing marks removed: "José Ñúñez" is "Jose Nunez"), and the letters
// that do not decompose into an ASCII letter plus marks are spelled as
// people write them in ASCII (ß is ss, Æ is AE, Ø is O, Ł is L). A letter
// is never dropped: what cannot be spelled becomes a space, as a last
// resort, so the words around it stay apart.

// spelled are the letters without an ASCII decomposition, and the
// typographic punctuation that has an ASCII twin.
var spelled = map[rune]string{
	'ß': "ss", 'ẞ': "SS", 'Æ': "AE", 'æ': "ae", 'Ø': "O", 'ø': "o", 'Ł': "L", 'ł': "l",
	'Đ': "D", 'đ': "d", 'Ð': "D", 'ð': "d", 'Œ': "OE", 'œ': "oe", 'Þ': "TH", 'þ': "th",
	'Ħ': "H", 'ħ': "h", 'ı': "i", 'Ĳ': "IJ", 'ĳ': "ij", 'ĸ': "k", 'Ŀ': "L", 'ŀ': "l",
	'ŉ': "'n", 'Ŋ': "N", 'ŋ': "n", 'Ŧ': "T", 'ŧ': "t", 'ſ': "s", 'ƒ': "f", 'Ə': "E", 'ə': "e",
	'\u2018': "'", '\u2019': "'", '\u201A': "'", '\u201C': `"`, '\u201D': `"`, '\u201E': `"`,
	'\u2010': "-", '\u2011': "-", '\u2012': "-", '\u2013': "-", '\u2014': "-", '\u2212': "-",
	'\u00A0': " ", '\u2026': "...", '\u00B4': "'", '\u02BC': "'",
}

// ASCII folds s to printable ASCII letter by letter (see above); control
// characters become spaces.
func ASCII(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= ' ' && r < 0x7f:
			b.WriteRune(r)
		case spelled[r] != "":
			b.WriteString(spelled[r])
		default:
			b.WriteString(decomposed(r))
		}
	}
	return b.String()
}

// stripMarks hands out transformers that decompose (NFD) and remove the
// nonspacing marks. A chained transformer keeps state between calls, so
// each use takes one of its own: names are folded by many requests at
// once.
var stripMarks = sync.Pool{New: func() any {
	return transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)))
}}

// withoutMarks is s decomposed, without its nonspacing marks.
func withoutMarks(s string) (string, error) {
	t := stripMarks.Get().(transform.Transformer)
	defer stripMarks.Put(t)
	out, _, err := transform.String(t, s)
	return out, err
}

// decomposed is r without its marks when that leaves printable ASCII (a
// ligature like ﬁ gives fi), a space otherwise.
func decomposed(r rune) string {
	out, err := withoutMarks(norm.NFKC.String(string(r)))
	if err != nil || out == "" {
		return " "
	}
	for _, c := range out {
		if c < ' ' || c >= 0x7f {
			if s := spelled[c]; s != "" && len([]rune(out)) == 1 {
				return s
			}
			return " "
		}
	}
	return out
}

// upper is s folded to ASCII (ASCII), upper-cased, with the characters
// NACHA allows in names (letters, digits, spaces and simple punctuation),
// runs of spaces made one, cut to n.
func upper(s string, n int) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToUpper(ASCII(s)) {
		switch {
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(".,-&'/", r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	out := b.String()
	if len(out) > n {
		out = strings.TrimSpace(out[:n])
	}
	return out
}

// AddendaLength is the length of an 05 addenda record's payment related
// information.
const AddendaLength = 80

// addendaText is a payment's description as its 05 addenda carries it:
// folded to ASCII, control characters and runs of spaces made one space,
// cut to AddendaLength; "" when nothing is left.
func addendaText(s string) string {
	out := strings.Join(strings.Fields(ASCII(s)), " ")
	// The addenda's characters are alphanumeric to moov-io/ach and NACHA
	// alike; these two delimit fields in some banks' parsers.
	out = strings.NewReplacer("*", " ", "\\", " ").Replace(out)
	out = strings.Join(strings.Fields(out), " ")
	if len(out) > AddendaLength {
		out = strings.TrimSpace(out[:AddendaLength])
	}
	return out
}

// Upper is s as a NACHA name field carries it, at most n characters (see
// upper): an originator's company name is checked with it, so that what
// an operator sets is what its batches say.
func Upper(s string, n int) string { return upper(s, n) }
