package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// The example of the Standard Webhooks specification and its libraries.
func TestSignMatchesTheStandardWebhooksVector(t *testing.T) {
	got, err := Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; err != nil || got != want {
		t.Errorf("Sign = %q, %v; want %q", got, err, want)
	}
	if _, err := Sign("whsec_!!!", "m", time.Unix(0, 0), nil); err == nil {
		t.Error("a secret that is not base64 was accepted")
	}
}

func TestNewSecret(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b || !strings.HasPrefix(a, "whsec_") || len(a) != len("whsec_")+44 {
		t.Errorf("secrets %q, %q", a, b)
	}
}

func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.215.14": true, "8.8.8.8": true, "2606:4700::1111": true, "1.1.1.1": true,
		"127.0.0.1": false, "127.255.0.1": false, "::1": false, "10.0.0.1": false, "172.16.0.1": false,
		"172.31.255.255": false, "192.168.0.1": false, "169.254.169.254": false, "100.64.0.1": false,
		"100.127.255.254": false, "0.0.0.0": false, "0.1.2.3": false, "::": false, "224.0.0.1": false,
		"239.255.255.250": false, "255.255.255.255": false, "240.0.0.1": false, "fe80::1": false,
		"fd00:ec2::254": false, "fc00::1": false, "ff02::1": false, "::ffff:10.0.0.1": false,
		"::ffff:127.0.0.1": false, "::ffff:93.184.215.14": true, "64:ff9b::a00:1": false,
		"2002:a00:1::": false, "2001:db8::1": false, "198.18.0.1": false, "192.0.2.1": false,
		"::10.0.0.1": false, "fe80::1%eth0": false,
	} {
		if got := Public(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Public(%s) = %v, want %v", addr, got, want)
		}
	}
}

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestURLPolicy(t *testing.T) {
	strict := URLPolicy{Resolver: fakeResolver{
		"hooks.example.com": {netip.MustParseAddr("93.184.215.14")},
		"mixed.example.com": {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")},
		"inside.example":    {netip.MustParseAddr("192.168.10.1")},
	}}
	dev := URLPolicy{AllowPrivate: true}
	cases := []struct {
		policy URLPolicy
		env    tenant.Environment
		url    string
		want   string // "" means refused
	}{
		{strict, tenant.Sandbox, "https://hooks.example.com/a?b=c#frag", "https://hooks.example.com/a?b=c"},
		{strict, tenant.Sandbox, "http://hooks.example.com/a", "http://hooks.example.com/a"},
		{strict, tenant.Production, "http://hooks.example.com/a", ""},
		{strict, tenant.Production, "https://hooks.example.com:8443/a", "https://hooks.example.com:8443/a"},
		{strict, tenant.Sandbox, "https://mixed.example.com/", ""},
		{strict, tenant.Sandbox, "https://inside.example/", ""},
		{strict, tenant.Sandbox, "https://unknown.example/", ""},
		{strict, tenant.Sandbox, "https://localhost/", ""},
		{strict, tenant.Sandbox, "https://127.0.0.1/", ""},
		{dev, tenant.Sandbox, "http://127.0.0.1:9000/hooks", "http://127.0.0.1:9000/hooks"},
		{dev, tenant.Sandbox, "http://localhost/hooks", "http://localhost/hooks"},
		{dev, tenant.Production, "http://localhost/hooks", ""},
		{dev, tenant.Sandbox, "https://u@localhost/", ""},
		{dev, tenant.Sandbox, "mailto:a@b.example", ""},
		{dev, tenant.Sandbox, "https://example.com:0/", ""},
		{dev, tenant.Sandbox, "https://" + strings.Repeat("a", 2040) + ".example/", ""},
	}
	for _, c := range cases {
		got, err := c.policy.Check(context.Background(), c.env, c.url)
		if c.want == "" {
			if err == nil || errs.CodeOf(err) != errs.InvalidURL {
				t.Errorf("Check(%s, %s) = %q, %v; want invalid_url", c.env, c.url, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Check(%s, %s) = %q, %v; want %q", c.env, c.url, got, err, c.want)
		}
	}
}

func TestNextFollowsTheScheduleWithJitter(t *testing.T) {
	now := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	fail := "boom"
	for i, wait := range Schedule {
		for range 50 {
			d := next(Delivery{Status: Pending, Attempts: i}, Attempt{Error: &fail}, now)
			if d.Status != Pending || d.NextAttemptAt == nil || d.Attempts != i+1 || *d.LastError != "boom" {
				t.Fatalf("after attempt %d: %+v", i+1, d)
			}
			got := d.NextAttemptAt.Sub(now)
			lo, hi := time.Duration(float64(wait)*(1-Jitter)), time.Duration(float64(wait)*(1+Jitter))
			if got < lo || got > hi {
				t.Fatalf("wait after attempt %d = %v, want %v ± 10 %%", i+1, got, wait)
			}
		}
	}
	d := next(Delivery{Status: Pending, Attempts: len(Schedule)}, Attempt{Error: &fail}, now)
	if d.Status != Failed || d.NextAttemptAt != nil {
		t.Errorf("after the last retry: %+v", d)
	}
	for code, want := range map[int]string{200: Delivered, 204: Delivered, 299: Delivered, 199: Pending, 301: Pending, 410: Pending, 500: Pending} {
		d := next(Delivery{Status: Pending}, Attempt{StatusCode: &code}, now)
		if d.Status != want {
			t.Errorf("HTTP %d → %s, want %s", code, d.Status, want)
		}
	}
}

func FuzzURLPolicy(f *testing.F) {
	for _, s := range []string{"https://example.com/a", "http://[::1]:80/", "//x", "http://a@b/", "https://é.example/%zz"} {
		f.Add(s)
	}
	p := URLPolicy{Resolver: fakeResolver{}}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := p.Check(context.Background(), tenant.Production, raw)
		if err != nil {
			if errs.CodeOf(err) != errs.InvalidURL {
				t.Fatalf("Check(%q) error %v is not invalid_url", raw, err)
			}
			return
		}
		if !strings.HasPrefix(got, "https://") || len(got) > MaxURLLength+16 {
			t.Fatalf("Check(%q) accepted %q", raw, got)
		}
	})
}

func TestVerify(t *testing.T) {
	secret := NewSecret()
	at := time.Date(2026, 11, 2, 15, 4, 5, 0, time.UTC)
	body := []byte(`{"id":"evt_1"}`)
	sig, err := Sign(secret, "evt_1", at, body)
	if err != nil {
		t.Fatal(err)
	}
	header := func(id, ts, sigs string) http.Header {
		return http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {sigs}}
	}
	ts := fmt.Sprint(at.Unix())
	if err := Verify(secret, header("evt_1", ts, "v1,bogus "+sig), body, at.Add(time.Minute)); err != nil {
		t.Errorf("valid delivery refused: %v", err)
	}
	for name, c := range map[string]struct {
		h    http.Header
		body string
		now  time.Time
	}{
		"other body":      {header("evt_1", ts, sig), `{"id":"evt_2"}`, at},
		"other id":        {header("evt_2", ts, sig), string(body), at},
		"other timestamp": {header("evt_1", fmt.Sprint(at.Unix()+1), sig), string(body), at},
		"too old":         {header("evt_1", ts, sig), string(body), at.Add(6 * time.Minute)},
		"from the future": {header("evt_1", ts, sig), string(body), at.Add(-6 * time.Minute)},
		"no signature":    {header("evt_1", ts, ""), string(body), at},
		"no id":           {header("", ts, sig), string(body), at},
	} {
		if err := Verify(secret, c.h, []byte(c.body), c.now); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := Verify(NewSecret(), header("evt_1", ts, sig), body, at); err == nil {
		t.Error("another secret verified the delivery")
	}
}

// TestEmbeddedIPv4IsRefused: every IPv6 form that embeds an IPv4 address
// is refused when that address is not public, at registration (an IP
// literal in the URL) and at dial time.
func TestEmbeddedIPv4IsRefused(t *testing.T) {
	for _, c := range []struct{ form, addr string }{
		{"IPv4-mapped", "::ffff:127.0.0.1"},
		{"IPv4-mapped, hex", "::ffff:7f00:1"},
		{"IPv4-mapped metadata", "::ffff:169.254.169.254"},
		{"IPv4-translated", "::ffff:0:7f00:1"},
		{"IPv4-translated private", "::ffff:0:a00:1"},
		{"IPv4-compatible", "::127.0.0.1"},
		{"IPv4-compatible private", "::10.0.0.1"},
		{"NAT64", "64:ff9b::7f00:1"},
		{"NAT64 metadata", "64:ff9b::a9fe:a9fe"},
		{"NAT64 local-use", "64:ff9b:1::a00:1"},
		{"6to4", "2002:7f00:1::1"},
		{"6to4 private", "2002:a00:1::"},
		{"Teredo (server 127.0.0.1)", "2001:0:7f00:1::1"},
		{"Teredo (client 10.0.0.1, inverted)", "2001:0:4136:e378:8000:63bf:f5ff:fffe"},
	} {
		a := netip.MustParseAddr(c.addr)
		if Public(a) {
			t.Errorf("%s %s: Public", c.form, c.addr)
		}
		if err := refusePrivate("tcp", netip.AddrPortFrom(a, 443).String(), nil); err == nil {
			t.Errorf("%s %s: dialled", c.form, c.addr)
		}
		if _, err := (URLPolicy{}).Check(context.Background(), tenant.Production, "https://["+c.addr+"]/hooks"); errs.CodeOf(err) != errs.InvalidURL {
			t.Errorf("%s %s: registered (%v)", c.form, c.addr, err)
		}
	}
	// An IPv4-mapped public address is the public address.
	if !Public(netip.MustParseAddr("::ffff:93.184.216.34")) {
		t.Error("::ffff:93.184.216.34 refused")
	}
}
