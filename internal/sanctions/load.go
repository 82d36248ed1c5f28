package sanctions

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// The published layouts: sdn.csv has 12 fields a record, alt.csv 5.
const (
	sdnFields = 12
	altFields = 5
)

// snapshot is one loaded list with its indexes; never changed once built.
type snapshot struct {
	entries    []Entry
	aliases    int
	people     index // listed individuals' surnames
	businesses index // entities' names without their legal forms
	byNum      map[string]int32
}

// records calls fn with each record of a CSV in OFAC's form, with its
// line. A last line holding only the end-of-file marker (a control-Z that
// the Treasury's downloads carry) is skipped.
func records(r io.Reader, fields int, fn func(line int, rec []string) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.Trim(rec[0], "\x1a \t") == "" {
			continue
		}
		if len(rec) != fields {
			return fmt.Errorf("line %d: %d fields, not the %d of the published layout", line, len(rec), fields)
		}
		if err := fn(line, rec); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
}

// field is a CSV field with OFAC's "-0-" for empty read as "".
func field(s string) string {
	s = strings.TrimSpace(s)
	if s == "-0-" {
		return ""
	}
	return s
}

// number checks that s, a field named name, is an entry or alias number.
func number(name, s string) error {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return fmt.Errorf("%s %q is not a number", name, s)
	}
	return nil
}

// Load reads a list from sdn (sdn.csv) and, when not nil, alt (alt.csv).
// A record out of the published layout (another number of fields, an
// entry number that is not a number, an unknown SDN_Type or alt_type, an
// empty name) refuses the whole list, as does a list without entries.
// An alias of an entry the list does not have is left out.
func Load(sdn, alt io.Reader) (*List, error) {
	s, err := load(sdn, alt, "sdn.csv", "alt.csv")
	if err != nil {
		return nil, err
	}
	l := &List{now: time.Now}
	l.cur.Store(s)
	l.state.Store(&Status{Entries: len(s.entries), Aliases: s.aliases, LoadedAt: time.Now().UTC()})
	return l, nil
}

// load reads the list; sdnName and altName name the files in errors.
func load(sdn, alt io.Reader, sdnName, altName string) (*snapshot, error) {
	s := &snapshot{byNum: map[string]int32{}}
	err := records(sdn, sdnFields, func(_ int, rec []string) error {
		e := Entry{Num: strings.TrimSpace(rec[0]), Name: field(rec[1]), Type: strings.ToLower(field(rec[2])), Programs: ParsePrograms(rec[3])}
		if err := number("ent_num", e.Num); err != nil {
			return err
		}
		switch e.Type {
		case "", "individual", "vessel", "aircraft":
		default:
			return fmt.Errorf("SDN_Type %q is not individual, vessel, aircraft or -0-", rec[2])
		}
		if e.Name == "" {
			return errors.New("SDN_Name is empty")
		}
		if _, dup := s.byNum[e.Num]; dup {
			return fmt.Errorf("ent_num %s appears twice", e.Num)
		}
		s.byNum[e.Num] = int32(len(s.entries))
		s.entries = append(s.entries, e)
		s.name(int32(len(s.entries)-1), e.Name)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sdnName, err)
	}
	if len(s.entries) == 0 {
		return nil, fmt.Errorf("%s: no entries", sdnName)
	}
	if alt != nil {
		err := records(alt, altFields, func(_ int, rec []string) error {
			num, kind, name := strings.TrimSpace(rec[0]), strings.ToLower(field(rec[2])), field(rec[3])
			if err := number("ent_num", num); err != nil {
				return err
			}
			if err := number("alt_num", strings.TrimSpace(rec[1])); err != nil {
				return err
			}
			switch kind {
			case "aka", "fka", "nka":
			default:
				return fmt.Errorf("alt_type %q is not aka, fka or nka", rec[2])
			}
			if name == "" {
				return errors.New("alt_name is empty")
			}
			if i, ok := s.byNum[num]; ok {
				s.aliases++
				s.name(i, name)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", altName, err)
		}
	}
	s.people.done()
	s.businesses.done()
	return s, nil
}

// name indexes name (the entry's own or an alias) of entry i.
func (s *snapshot) name(i int32, name string) {
	switch s.entries[i].Type {
	case "individual":
		for _, p := range listedPerson(name) {
			s.people.add(p.surname, listed{entry: i, name: name, given: p.given})
		}
	case "":
		if ws := businessWords(words(name)); len(ws) > 0 {
			s.businesses.add(key(ws), listed{entry: i, name: name})
		}
	}
}
