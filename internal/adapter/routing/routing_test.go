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

func fedLine(rn, name string) string {
	// routing(9) office(1) frb(9) type(1) date(6) new routing(9) name(36) address(36) …
	rec := rn + "O" + "011000015" + "0" + "020802" + "000000000" + fmt.Sprintf("%-36s", name) + fmt.Sprintf("%-36s", "1 MAIN ST")
	return rec + strings.Repeat(" ", 155-len(rec))
}

func TestLoadFedACH(t *testing.T) {
	file := fedLine("011000015", "FEDERAL RESERVE BANK") + "\r\n" + fedLine("021000021", "JPMORGAN CHASE   BANK, NA") + "\n\n"
	d, err := LoadFedACH(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Full() || d.Len() != 5 {
		t.Fatalf("full = %v, len = %d; want true, 5 (two records + three sandbox numbers)", d.Full(), d.Len())
	}
	if name, err := d.Check("021000021"); err != nil || name != "JPMORGAN CHASE BANK, NA" {
		t.Errorf("Check = %q, %v", name, err)
	}
	if _, err := d.Check("026009593"); errs.CodeOf(err) != errs.InvalidRoutingNumber {
		t.Errorf("unknown number with a full directory: %v, want invalid_routing_number", err)
	}
	if _, err := d.Check(SandboxRouting2); err != nil {
		t.Errorf("sandbox number refused by a full directory: %v", err)
	}
	for _, bad := range []string{"", "short line\n", fedLine("021000022", "BAD CHECK DIGIT")} {
		if _, err := LoadFedACH(strings.NewReader(bad)); err == nil {
			t.Errorf("LoadFedACH accepted %q", bad)
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
