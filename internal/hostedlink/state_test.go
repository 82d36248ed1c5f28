package hostedlink

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/funding"
)

func TestStateOf(t *testing.T) {
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	open := func(status string, expires time.Time) *funding.Verification {
		return &funding.Verification{Status: status, ExpiresAt: expires}
	}
	for _, c := range []struct {
		name string
		src  funding.Source
		want State
	}{
		{"verified", funding.Source{Status: funding.Verified}, Verified},
		{"verified after deposits", funding.Source{Status: funding.Verified, Verification: open("succeeded", now)}, Verified},
		{"no deposits yet", funding.Source{Status: funding.Unverified}, NotInitiated},
		{"deposits open", funding.Source{Status: funding.Unverified, Verification: open(funding.DepositPending, now.Add(time.Hour))}, Pending},
		{"deposits past expiry, sweeper not run", funding.Source{Status: funding.Unverified, Verification: open(funding.DepositPending, now)}, Expired},
		{"deposits expired", funding.Source{Status: funding.Unverified, Verification: open(funding.DepositExpired, now.Add(time.Hour))}, Expired},
		{"attempts used up", funding.Source{Status: funding.Unverified, Verification: open(funding.DepositFailed, now.Add(time.Hour))}, Failed},
		{"instant deposit refused by the bank", funding.Source{Status: funding.Unverified, Verification: &funding.Verification{
			Method: funding.MethodInstant, Status: funding.DepositFailed, FailureCode: funding.ReasonClosed, ExpiresAt: now.Add(time.Hour)}}, Refused},
	} {
		if got := stateOf(c.src, now); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestPageAddresses(t *testing.T) {
	must := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	p := Page{Source: funding.Source{ID: "fs_1"}, Success: must("https://shop.example/done?order=7"), Cancel: must("https://shop.example/cancel")}
	if got, want := p.SuccessAddress(), "https://shop.example/done?order=7&funding_source_id=fs_1&status=Verified"; got != want {
		t.Errorf("success %q, want %q", got, want)
	}
	if got, want := p.CancelAddress(), "https://shop.example/cancel?funding_source_id=fs_1"; got != want {
		t.Errorf("cancel %q, want %q", got, want)
	}
	if got := p.RedirectOrigins(); !slices.Equal(got, []string{"https://shop.example"}) {
		t.Errorf("origins %q: one origin once", got)
	}
	p.Cancel = must("http://localhost:3000/back")
	if got := p.RedirectOrigins(); !slices.Equal(got, []string{"https://shop.example", "http://localhost:3000"}) {
		t.Errorf("origins %q", got)
	}
	if (Page{}).SuccessAddress() != "" || (Page{}).CancelAddress() != "" || (Page{}).RedirectOrigins() != nil {
		t.Error("a page without targets has addresses")
	}
}
