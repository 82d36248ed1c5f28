package routing_test

import (
	"strings"
	"testing"

	"github.com/fundsource/fundsource/internal/adapter/routing"
)

func TestEmbeddedRails(t *testing.T) {
	r := routing.EmbeddedRails()
	for rn, want := range map[string]string{
		routing.SandboxRouting1: "rtp", routing.SandboxRouting2: "fednow", routing.SandboxRouting3: "",
		"011401533": "", "021000021": "rtp",
	} {
		if got := r.Rail(rn); got != want {
			t.Errorf("Rail(%s) = %q, want %q", rn, got, want)
		}
	}
	d := routing.Embedded()
	if name, err := d.Check(routing.SandboxRouting3); err != nil || name != "fundsource Sandbox Savings" || !d.SandboxOnly(routing.SandboxRouting3) {
		t.Errorf("333333334: %q, %v, sandbox only %v", name, err, d.SandboxOnly(routing.SandboxRouting3))
	}
}

func TestLoadRails(t *testing.T) {
	r, err := routing.LoadRails(strings.NewReader("routing_number,rail\n333333334,FedNow\n110000000,none\n011401533, rtp\n"))
	if err != nil {
		t.Fatal(err)
	}
	for rn, want := range map[string]string{"333333334": "fednow", "110000000": "", "011401533": "rtp", "222222226": "fednow"} {
		if got := r.Rail(rn); got != want {
			t.Errorf("Rail(%s) = %q, want %q", rn, got, want)
		}
	}
	for _, tc := range []struct{ file, want string }{
		{"", "empty"},
		{"rn,rail\n", "line 1"},
		{"routing_number,rail\n110000001,rtp\n", "line 2"},
		{"routing_number,rail\n110000000,rtp\n110000000,ach\n", `line 3: rail "ach"`},
		{"routing_number,rail\n110000000\n", "wrong number of fields"},
	} {
		if _, err := routing.LoadRails(strings.NewReader(tc.file)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error with %q", tc.file, err, tc.want)
		}
	}
}
