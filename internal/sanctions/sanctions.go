// Package sanctions screens names against the Treasury's list of Specially
// Designated Nationals (OFAC's SDN list): US persons may not send money to
// a name on it, so a customer whose name resembles one is held for an
// operator's review rather than refused or paid.
//
// The list is read from its published CSV files: sdn.csv (OFAC_SDN_FILE;
// no header, 12 columns ent_num, SDN_Name, SDN_Type, Program, Title,
// Call_Sign, Vess_type, Tonnage, GRT, Vess_flag, Vess_owner, Remarks;
// "-0-" for an empty field) and, optionally, alt.csv (OFAC_ALT_FILE;
// ent_num, alt_num, alt_type, alt_name, alt_remarks), whose names are the
// entries' aliases. A file that is not in that layout is refused rather
// than read as far as it goes, and a configured sdn.csv of fewer than
// MinEntries entries is refused: a truncated download, an empty file or
// alt.csv given for sdn.csv would otherwise screen everyone clear.
// Without a configured file (development, the sandbox) the list is an
// embedded sample of fictitious names that the sandbox documents, so
// that a merchant can rehearse a match. A List reloads its files when
// they change (Watch); a file that is refused keeps the list in use.
//
// Names are compared folded (letters folded to ASCII with golang.org/x/text's
// decomposition, which knows every Unicode letter's marks, lower case,
// punctuation and spaces dropped) by Jaro–Winkler similarity, computed by
// github.com/adrg/strutil: a small, well-kept library of string metrics
// with no dependencies of its own, whose Jaro–Winkler is the textbook
// one (prefix bonus 0.1 over at most 4 letters), which is what screening
// vendors and OFAC's own search tool use. Two names are alike at
// Threshold (0.92) or more.
//
// Whole names are not compared with each other: a person shares given
// names with many listed people (a customer "Mohammed Ali" with "TUFAIL,
// Mohammed") and listed people carry middle names and patronymics that
// customers leave out ("VOLKANOV, Ilya Petrovich" against "Ilya
// Volkanov"), so whole-name similarity flags the first and misses the
// second. A person matches a listed individual when the surnames are
// alike and the person's first given name is alike one of the listed
// given names; a given name alone never matches, nor does a surname
// alone. SDN names of individuals are written "SURNAME, Given Middle
// Patronymic"; a listed name without a comma is read as "Given … Surname"
// with each run of its last words tried as the surname. An individual's
// aliases match the same way. A business name matches an entity (an
// entry whose SDN_Type is empty) by its name or an alias, with legal
// forms (LTD, LLC, INC, CO, FZE, SA, GMBH, …) set aside on both sides.
// Vessels and aircraft are loaded and counted but match no person's or
// business's name.
//
// The index keeps screening under a millisecond without comparing a name
// against every listed surname with full Jaro–Winkler, and cannot miss a
// match, because it only leaves out names whose similarity is provably
// below the threshold (see index.go).
package sanctions

import (
	"encoding/json"
	"strings"
	"time"
)

// Threshold is the least Jaro–Winkler similarity at which two surnames,
// two given names or two business names are alike.
const Threshold = 0.92

// Entry is one SDN list entry.
type Entry struct {
	Num  string `json:"ent_num"`  // OFAC's entry number
	Name string `json:"sdn_name"` // as published: "SURNAME, Given" for individuals
	Type string `json:"sdn_type"` // "individual", "vessel", "aircraft" or "" (an entity)
	// Programs are the sanctions programs the entry is listed under
	// ("SDGT", "SYRIA"), from the file's bracketed Program field.
	Programs []string `json:"-"`
}

// Match is the best entry a name resembles.
type Match struct {
	Entry Entry
	// Listed is the entry's name or alias the name resembles, as published.
	Listed string
	// Score is the similarity (0..1): for a person the lower of the
	// surnames' and the given names' similarity.
	Score float64
}

// Name is one name to screen: a person's or a business's. The zero Name
// matches nothing.
type Name struct {
	given    string   // the key of a person's first given name
	surnames []string // the keys a person's surname may be
	business string   // a business name's key, without its legal forms
}

// Person is the name of a person given apart as given names (the first
// is compared; middle names are not) and surname.
func Person(given, surname string) Name {
	g, s := words(given), words(surname)
	if len(g) == 0 || len(s) == 0 {
		return Name{}
	}
	return Name{given: g[0], surnames: []string{key(s)}}
}

// Written is a person's name written in one string, as on an ACH entry:
// "SURNAME, Given …" when it has a comma, else "Given … Surname", with
// each run of its last words tried as the surname (a compound surname
// such as "Sandoval Quintero", or only "Quintero").
func Written(name string) Name {
	alts := listedPerson(name)
	if len(alts) == 0 {
		return Name{}
	}
	n := Name{given: alts[0].given[0]}
	for _, a := range alts {
		n.surnames = append(n.surnames, a.surname)
	}
	return n
}

// Business is a business name.
func Business(name string) Name {
	ws := businessWords(words(name))
	if len(ws) == 0 {
		return Name{}
	}
	return Name{business: key(ws)}
}

// personName is one reading of a listed person's name: a surname key and
// the keys of the given names that go with it.
type personName struct {
	surname string
	given   []string
}

// listedPerson reads a person's name as the list writes it (see Written):
// its readings, none when it does not have a surname and a given name.
func listedPerson(name string) []personName {
	if last, first, ok := strings.Cut(name, ","); ok {
		s, g := words(last), words(first)
		if len(s) == 0 || len(g) == 0 {
			return nil
		}
		return []personName{{surname: key(s), given: g}}
	}
	ws := words(name)
	var out []personName
	for k := len(ws) - 1; k >= 1; k-- {
		out = append(out, personName{surname: key(ws[k:]), given: ws[:k]})
	}
	return out
}

// ParsePrograms reads sdn.csv's Program field, whose programs are written
// between brackets with the outermost ones left out ("SDGT] [SYRIA"), into
// the programs' names.
func ParsePrograms(field string) []string {
	var out []string
	for _, p := range strings.Split(field, "]") {
		if p = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(p), "[")); p != "" && p != "-0-" {
			out = append(out, p)
		}
	}
	return out
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
	// SDNEntry, Programs (the entry's), Listed and Score are the match
	// (potential_match, cleared).
	SDNEntry *Entry   `json:"sdn_entry,omitempty"`
	Programs []string `json:"programs,omitempty"`
	Listed   string   `json:"matched_name,omitempty"`
	Score    *float64 `json:"score,omitempty"`
	// ClearedAt (UTC) and Note are the operator's clearance.
	ClearedAt *time.Time `json:"cleared_at,omitempty"`
	Note      *string    `json:"note,omitempty"`
}

// UnmarshalJSON reads a screening, and one stored before programs were a
// list (the entry's raw "program" field) with its programs read from it.
func (s *Screening) UnmarshalJSON(b []byte) error {
	type plain Screening
	var v struct {
		plain
		SDNEntry *struct {
			Entry
			Program string `json:"program"`
		} `json:"sdn_entry"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Screening(v.plain)
	if v.SDNEntry != nil {
		e := v.SDNEntry.Entry
		s.SDNEntry = &e
		if s.Programs == nil && v.SDNEntry.Program != "" {
			s.Programs = ParsePrograms(v.SDNEntry.Program)
		}
	}
	return nil
}

// Of is the screening of a customer with names, given its screening
// until now (prev, Status "" when never screened): a match is a
// potential_match unless an operator cleared that same entry.
func (l *List) Of(prev Screening, names ...Name) Screening {
	m, ok := l.Screen(names...)
	if !ok {
		return Screening{Status: Clear}
	}
	if prev.Status == Cleared && prev.SDNEntry != nil && prev.SDNEntry.Num == m.Entry.Num {
		return prev
	}
	e, score := m.Entry, m.Score
	return Screening{Status: PotentialMatch, SDNEntry: &e, Programs: e.Programs, Listed: m.Listed, Score: &score}
}
