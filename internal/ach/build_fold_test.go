package ach

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUpperFoldsNamesLetterByLetter(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"José Ñúñez-García", "JOSE NUNEZ-GARCIA"},
		{"Bea's Bakery LLC", "BEA'S BAKERY LLC"},
		{"Straße", "STRASSE"},
		{"Ærø Øster", "AERO OSTER"},
		{"Łukasz Đorđević", "LUKASZ DORDEVIC"},
		{"Œuvre Þór", "OEUVRE THOR"},
		{"François Müller", "FRANCOIS MULLER"},
		{"Zoë  Ångström", "ZOE ANGSTROM"},
		{"ﬁnch", "FINCH"},
		{"O\u2019Brien", "O'BRIEN"},
		{"李 Wang", "WANG"},       // no ASCII spelling: a space, trimmed
		{"Ann 李 Lee", "ANN LEE"}, // between words: one space
		{"Smith!Jones", "SMITH JONES"},
		{"A Very Long Company Name Incorporated", "A VERY LONG COMPANY NA"},
	} {
		if got := upper(c.in, 22); got != c.want {
			t.Errorf("upper(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestASCIINeverDropsALetter(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Ñ", "N"}, {"ñ", "n"}, {"ü", "u"}, {"ß", "ss"}, {"ẞ", "SS"}, {"æ", "ae"}, {"ø", "o"},
		{"ł", "l"}, {"đ", "d"}, {"œ", "oe"}, {"þ", "th"}, {"ı", "i"}, {"Ĳ", "IJ"}, {"\u00A0", " "},
		{"Ω", " "}, {"\x00", " "}, {"plain ASCII: 1-2-3", "plain ASCII: 1-2-3"},
	} {
		if got := ASCII(c.in); got != c.want {
			t.Errorf("ASCII(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAddendaText(t *testing.T) {
	long := strings.Repeat("abcdefghij", 9) // 90
	for _, c := range []struct{ in, want string }{
		{"Invoice 123 for Café Olé", "Invoice 123 for Cafe Ole"},
		{"  two\tlines\nhere  ", "two lines here"},
		{"a*b\\c", "a b c"},
		{long, long[:80]},
		{"   ", ""},
	} {
		if got := addendaText(c.in); got != c.want {
			t.Errorf("addendaText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzUpper: any input gives at most n characters of NACHA's name
// alphabet, and an input of ASCII letters keeps every letter.
func FuzzUpper(f *testing.F) {
	for _, s := range []string{"José Ñúñez-García", "Straße", "ﬁ", "\xff\xfe", "Ǆ", "a\u0301\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := upper(s, 22)
		if len(got) > 22 || !utf8.ValidString(got) || got != strings.TrimSpace(got) {
			t.Fatalf("upper(%q) = %q", s, got)
		}
		for _, r := range got {
			if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" .,-&'/", r)) {
				t.Fatalf("upper(%q) = %q: %q", s, got, r)
			}
		}
		// Plain ASCII words come out as they went in, upper-cased.
		if plain := strings.Join(strings.Fields(s), " "); len(plain) <= 22 && strings.Trim(strings.ToUpper(plain), "ABCDEFGHIJKLMNOPQRSTUVWXYZ ") == "" && got != strings.ToUpper(plain) {
			t.Fatalf("upper(%q) = %q, want %q", s, got, strings.ToUpper(plain))
		}
		if d := addendaText(s); len(d) > AddendaLength || d != strings.TrimSpace(d) || strings.ContainsAny(d, "*\\") {
			t.Fatalf("addendaText(%q) = %q", s, d)
		}
		a := ASCII(s)
		for _, r := range a {
			if r < ' ' || r >= 0x7f {
				t.Fatalf("ASCII(%q) = %q", s, a)
			}
		}
	})
}
