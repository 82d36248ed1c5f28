package redirect

import (
	"errors"
	"net/url"
	"testing"
)

func TestTarget(t *testing.T) {
	sandbox := Rules{}
	prod := Rules{RequireHTTPS: true, RequireAllowed: true, Allowed: []string{"https://shop.example", "https://pay.example:8443"}}
	tests := []struct {
		raw   string
		rules Rules
		want  error // nil: accepted
	}{
		// A sandbox that allowed no origin sends customers only to this
		// computer: a free sandbox link is no open redirect.
		{"https://shop.example/done?order=7", sandbox, ErrNotLocal},
		{"https://evil.example/", sandbox, ErrNotLocal},
		{"http://localhost.evil.example/", sandbox, ErrNotLocal},
		{"http://127.0.0.1.evil.example/", sandbox, ErrNotLocal},
		{"http://10.0.0.1/", sandbox, ErrNotLocal},
		{"http://localhost:3000/done", sandbox, nil},
		{"https://LOCALHOST/done", sandbox, nil},
		{"http://localhost./done", sandbox, nil},
		{"http://127.0.0.2:9/x", sandbox, nil},
		{"http://[::ffff:127.0.0.1]:8080/", sandbox, nil},
		{"http://127.0.0.1:8080/x", sandbox, nil},
		{"HTTPS://Shop.Example/ok", prod, nil},
		{"https://shop.example:443/ok", prod, nil},
		{"https://pay.example:8443/", prod, nil},
		{"http://[::1]:8080/", sandbox, nil},
		{"http://shop.example/ok", prod, ErrNotHTTPS},
		{"https://evil.example/ok", prod, ErrNotAllowed},
		{"https://shop.example.evil.example/", prod, ErrNotAllowed},
		{"https://pay.example/", prod, ErrNotAllowed},
		{"", sandbox, ErrMalformed},
		{"javascript:alert(1)", sandbox, ErrMalformed},
		{"JavaScript://shop.example/%0aalert(1)", sandbox, ErrMalformed},
		{"data:text/html,hi", sandbox, ErrMalformed},
		{"//evil.example/x", sandbox, ErrMalformed},
		{"/relative/path", sandbox, ErrMalformed},
		{"https:evil.example", sandbox, ErrMalformed},
		{"https:/evil.example", sandbox, ErrMalformed},
		{`https://shop.example\@evil.example`, sandbox, ErrMalformed},
		{`https:\\evil.example`, sandbox, ErrMalformed},
		{"https://user:pw@shop.example/", sandbox, ErrMalformed},
		{"https://shop.example@evil.example/", sandbox, ErrMalformed},
		{"https://@evil.example/", sandbox, ErrMalformed},
		{"https://shop.example /x", sandbox, ErrMalformed},
		{"https://shop.example/\x00", sandbox, ErrMalformed},
		{"https://shop.example/\tx", sandbox, ErrMalformed},
		{"ftp://shop.example/", sandbox, ErrMalformed},
		{"https://", sandbox, ErrMalformed},
		{"https://:443/", sandbox, ErrMalformed},
		{"https://shop.example:99999/", sandbox, ErrMalformed},
		{"https://shop.example:/", sandbox, ErrMalformed},
		{"https://sh_op.example/", sandbox, ErrMalformed},
		{"https://-shop.example/", sandbox, ErrMalformed},
		{"https://" + string(make([]byte, MaxLen)), sandbox, ErrMalformed},
	}
	for _, tt := range tests {
		_, err := Target(tt.raw, tt.rules)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("Target(%q) = %v, want %v", tt.raw, err, tt.want)
		}
	}
}

func TestSandboxWithListedOrigins(t *testing.T) {
	r := Rules{RequireAllowed: true, Allowed: []string{"http://localhost:3000"}}
	if _, err := Target("http://localhost:3000/ok", r); err != nil {
		t.Errorf("listed origin refused: %v", err)
	}
	if _, err := Target("http://localhost:3001/ok", r); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("other port: got %v, want ErrNotAllowed", err)
	}
}

func TestOrigin(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"https://Shop.Example", "https://shop.example"},
		{"https://shop.example/", "https://shop.example"},
		{"https://shop.example:443", "https://shop.example"},
		{"http://shop.example:80", "http://shop.example"},
		{"http://localhost:3000", "http://localhost:3000"},
		{"https://[::1]:8443", "https://[::1]:8443"},
		{"https://shop.example/path", ""},
		{"https://shop.example?x=1", ""},
		{"https://shop.example?", ""},
		{"https://shop.example#frag", ""},
		{"https://user@shop.example", ""},
		{"shop.example", ""},
	}
	for _, tt := range tests {
		got, err := Origin(tt.raw)
		if tt.want == "" {
			if err == nil {
				t.Errorf("Origin(%q) = %q, want an error", tt.raw, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Origin(%q) = %q, %v, want %q", tt.raw, got, err, tt.want)
		}
	}
}

func TestAppend(t *testing.T) {
	params := url.Values{"funding_source_id": {"fs_1"}, "status": {"Verified"}}
	tests := []struct{ raw, want string }{
		{"https://shop.example/done", "https://shop.example/done?funding_source_id=fs_1&status=Verified"},
		{"https://shop.example/done?b=2&a=1", "https://shop.example/done?b=2&a=1&funding_source_id=fs_1&status=Verified"},
		{"https://shop.example/done?", "https://shop.example/done?funding_source_id=fs_1&status=Verified"},
		{"https://shop.example/done#step", "https://shop.example/done?funding_source_id=fs_1&status=Verified#step"},
	}
	shop := Rules{RequireAllowed: true, Allowed: []string{"https://shop.example"}}
	for _, tt := range tests {
		u, err := Target(tt.raw, shop)
		if err != nil {
			t.Fatalf("Target(%q): %v", tt.raw, err)
		}
		if got := Append(u, params); got != tt.want {
			t.Errorf("Append(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func FuzzTarget(f *testing.F) {
	for _, s := range []string{"https://shop.example/x?y=1", "javascript:alert(1)", "//evil", `https:\\x`, "https://a@b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := parse(raw) // the syntax every rule shares
		if err != nil {
			return
		}
		if _, err := Target(raw, Rules{}); err == nil && !Loopback(u.Hostname()) {
			t.Fatalf("a sandbox without origins accepted %q", raw)
		}
		// Whatever is accepted is an absolute http(s) address with a host,
		// and what the browser is sent still parses to the same origin.
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil {
			t.Fatalf("accepted %q as %#v", raw, u)
		}
		back, err := url.Parse(Append(u, url.Values{"k": {"v"}}))
		if err != nil || OriginOf(back) != OriginOf(u) {
			t.Fatalf("appended address of %q changes origin: %v", raw, err)
		}
	})
}
