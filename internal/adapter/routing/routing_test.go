package routing

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
)

func TestEmbeddedNumbersHaveValidCheckDigits(t *testing.T) {
	for _, rn := range []string{"021000021", "026009593", "121000248", "021000089", SandboxRouting1, SandboxRouting2} {
		if _, ok := embedded[rn]; !ok {
			t.Errorf("%s missing from the embedded directory", rn)
		}
	}
	for rn, name := range embedded {
		if !ValidChecksum(rn) {
			t.Errorf("embedded %s (%s) fails the check digit", rn, name)
		}
	}
}

func TestCheck(t *testing.T) {
	d := Embedded()
	cases := []struct {
		rn, name string
		ok       bool
	}{
		{"021000021", "JPMorgan Chase Bank", true},
		{"110000000", "fundsource Sandbox Bank", true},
		{"011000015", "", true}, // valid, unknown to the sample: accepted without a name
		{"021000022", "", false},
		{"02100002", "", false},
		{"0210000211", "", false},
		{"02100002a", "", false},
		{"", "", false},
		{"０21000021", "", false}, // full-width digit
	}
	for _, c := range cases {
		name, err := d.Check(c.rn)
		if (err == nil) != c.ok || name != c.name {
			t.Errorf("Check(%q) = %q, %v; want %q ok=%v", c.rn, name, err, c.name, c.ok)
		}
		if err != nil {
			if e, _ := errs.As(err); e.Code != errs.InvalidRoutingNumber || e.Param != "routing_number" {
				t.Errorf("Check(%q) error = %+v", c.rn, e)
			}
		}
	}
}

// fedLine is a FedACH participant directory record in the published
// layout (155 characters).
func fedLine(rn, name string) string {
	return fedRecord(rn, 'O', '1', "000000000", name)
}

func fedRecord(rn string, office, kind byte, newRN, name string) string {
	rec := rn + string(office) + "011000015" + string(kind) + "020802" + newRN +
		fmt.Sprintf("%-36s", name) + fmt.Sprintf("%-36s", "1 MAIN ST") + fmt.Sprintf("%-20s", "NEW YORK") +
		"NY" + "10017" + "0000" + "2125551234" + "1" + "1" + "     "
	if len(rec) != 155 {
		panic(fmt.Sprintf("FedACH record of %d characters", len(rec)))
	}
	return rec
}

// fedwireLine is a Fedwire funds directory record (fpddir.txt, 101
// characters): routing number, telegraphic name, customer name, state,
// city, funds transfer status, settlement-only status, book-entry
// securities transfer status, date of last revision.
func fedwireLine(rn, name string) string {
	rec := rn + fmt.Sprintf("%-18s", "JPMCHASE") + fmt.Sprintf("%-36s", name) + "NY" + fmt.Sprintf("%-25s", "NEW YORK") +
		"Y" + " " + "Y" + "20261101"
	if len(rec) != 101 {
		panic(fmt.Sprintf("Fedwire record of %d characters", len(rec)))
	}
	return rec
}

func TestLoadFedACH(t *testing.T) {
	file := fedLine("011000015", "FEDERAL RESERVE BANK") + "\r\n" + fedLine("021000021", "JPMORGAN CHASE   BANK, NA") + "\n\n" +
		fedRecord("026009593", 'B', '2', "021000021", "BANK OF AMERICA, N.A.") + "\n"
	d, err := LoadFedACH(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Full() || d.Len() != 6 {
		t.Fatalf("full = %v, len = %d; want true, 6 (three records + three sandbox numbers)", d.Full(), d.Len())
	}
	if name, err := d.Check("021000021"); err != nil || name != "JPMORGAN CHASE BANK, NA" {
		t.Errorf("Check = %q, %v", name, err)
	}
	if name, err := d.Check("026009593"); err != nil || name != "BANK OF AMERICA, N.A." {
		t.Errorf("Check of a branch record of type 2 = %q, %v", name, err)
	}
	if _, err := d.Check("121000248"); errs.CodeOf(err) != errs.InvalidRoutingNumber {
		t.Errorf("unknown number with a full directory: %v, want invalid_routing_number", err)
	}
	if _, err := d.Check(SandboxRouting2); err != nil {
		t.Errorf("sandbox number refused by a full directory: %v", err)
	}
}

// TestLoadFedACHRefusesOtherLayouts: a Fedwire directory, the JSON
// download, and any record that is not a FedACH record refuse the file,
// naming the line and saying why.
func TestLoadFedACHRefusesOtherLayouts(t *testing.T) {
	good := fedLine("021000021", "JPMORGAN CHASE BANK, NA")
	with := func(at int, b string) string { return good[:at] + b + good[at+len(b):] }
	for _, c := range []struct {
		name, file, want string
	}{
		{"empty", "", "empty"},
		{"blank lines", "\n  \n", "empty"},
		{"Fedwire directory", fedwireLine("021000021", "JPMORGAN CHASE BANK, NA") + "\n", "line 1: this is a Fedwire funds directory"},
		{"JSON", `{"fedACHParticipants":{"response":{"code":200},"fedACHParticipants":[{"routingNumber":"021000021"}]}}`, "line 1: this is JSON"},
		{"JSON list", "\n[\n  {\"routingNumber\": \"021000021\"}\n]\n", "line 2: this is JSON"},
		{"a record one short", good + "\n" + good + "\n" + good[:154] + "\n", "line 3: 154 characters"},
		{"a record one long", good + "\n" + good + " \n", "line 2: 156 characters"},
		{"a Fedwire record after FedACH ones", good + "\n" + fedwireLine("021000021", "X") + "\n", "line 2: 101 characters"},
		{"bad check digit", fedLine("021000022", "BAD CHECK DIGIT"), "line 1: routing number \"021000022\""},
		{"all-zero routing number", fedLine("000000000", "NO BANK"), "line 1: routing number \"000000000\""},
		{"office code", with(9, "X"), "office code"},
		{"servicing FRB", with(10, "01100001X"), "servicing FRB"},
		{"record type", with(19, "3"), "record type code"},
		{"change date", with(20, "02 802"), "change date"},
		{"type 2 without a new number", fedRecord("021000021", 'O', '2', "000000000", "CHASE"), "new routing number"},
		{"blank name", fedLine("021000021", ""), "customer name"},
		{"status codes", with(148, "  "), "columns 149-150"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadFedACH(strings.NewReader(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("LoadFedACH = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestCheckRefusesTheAllZeroNumber: 000000000 passes the check-digit sum
// but names no bank.
func TestCheckRefusesTheAllZeroNumber(t *testing.T) {
	for _, d := range []*Directory{Embedded(), {names: map[string]string{"000000000": "X"}, full: true}} {
		_, err := d.Check("000000000")
		if e, _ := errs.As(err); e == nil || e.Code != errs.InvalidRoutingNumber || e.Param != "routing_number" {
			t.Errorf("Check(000000000) = %v, want invalid_routing_number on routing_number", err)
		}
	}
}

func FuzzValidChecksum(f *testing.F) {
	for _, s := range []string{"021000021", "021000022", "", "abcdefghi", "1234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rn string) {
		ok := ValidChecksum(rn)
		if ok && (len(rn) != 9 || strings.Trim(rn, "0123456789") != "") {
			t.Fatalf("accepted %q", rn)
		}
		_, err := Embedded().Check(rn)
		if ok != (err == nil) {
			t.Fatalf("ValidChecksum(%q) = %v but Check error = %v", rn, ok, err)
		}
		if ok { // changing one digit must break the check digit
			b := []byte(rn)
			b[4] = '0' + (b[4]-'0'+1)%10
			if ValidChecksum(string(b)) {
				t.Fatalf("%q and %q both valid", rn, b)
			}
		}
	})
}
