package postgres_test

import (
	"context"
	"net"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/lib/pq"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

type hostPort struct {
	host string
	port uint16
}

func hostsOf(cfg pq.Config) []hostPort {
	hs := []hostPort{{cfg.Host, cfg.Port}}
	for _, m := range cfg.Multi {
		hs = append(hs, hostPort{m.Host, m.Port})
	}
	return hs
}

func TestConnStringRewritesMultiHostURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		hosts    []hostPort
		user, pw string
		db       string
		tsa      pq.TargetSessionAttrs
		timeout  string // connect_timeout in the result
	}{
		// What pg_autoctl show uri prints.
		{in: "postgres://h1:5501,h2:5502/fundsource?target_session_attrs=read-write&sslmode=disable",
			hosts: []hostPort{{"h1", 5501}, {"h2", 5502}}, db: "fundsource", tsa: "read-write", timeout: "5"},
		{in: "postgresql://app:p%40ss%27w@127.0.0.1:5501,127.0.0.1:5502/fs?sslmode=disable&connect_timeout=2",
			hosts: []hostPort{{"127.0.0.1", 5501}, {"127.0.0.1", 5502}}, user: "app", pw: "p@ss'w", db: "fs", tsa: "read-write", timeout: "2"},
		{in: "postgres://[::1]:5501,[fe80::2]:5502,h3/fs",
			hosts: []hostPort{{"::1", 5501}, {"fe80::2", 5502}, {"h3", 5432}}, db: "fs", tsa: "read-write", timeout: "5"},
		{in: "postgres://u@h1,h2/fs?port=6001,6002&target_session_attrs=any",
			hosts: []hostPort{{"h1", 6001}, {"h2", 6002}}, user: "u", db: "fs", tsa: "any", timeout: "5"},
		{in: "postgres://%2Fvar%2Frun%2Fa:7001,%2Fvar%2Frun%2Fb:7002/fs",
			hosts: []hostPort{{"/var/run/a", 7001}, {"/var/run/b", 7002}}, db: "fs", tsa: "read-write", timeout: "5"},
		{in: "host=h1,h2 port=5501,5502 dbname=fs",
			hosts: []hostPort{{"h1", 5501}, {"h2", 5502}}, db: "fs", tsa: "read-write", timeout: "5"},
		// One host: nothing but the timeout is added.
		{in: "postgres://u@h1:5501/fs", hosts: []hostPort{{"h1", 5501}}, user: "u", db: "fs", timeout: "5"},
		{in: "host=h1 port=5501 dbname=fs connect_timeout=9", hosts: []hostPort{{"h1", 5501}}, db: "fs", timeout: "9"},
	}
	for _, tt := range tests {
		dsn, err := postgres.ConnString(tt.in)
		if err != nil {
			t.Errorf("ConnString(%q): %v", tt.in, err)
			continue
		}
		cfg, err := pq.NewConfig(dsn)
		if err != nil {
			t.Errorf("ConnString(%q) = %q, which lib/pq refuses: %v", tt.in, dsn, err)
			continue
		}
		if got := hostsOf(cfg); !slices.Equal(got, tt.hosts) {
			t.Errorf("ConnString(%q): hosts %v, want %v", tt.in, got, tt.hosts)
		}
		if (tt.user != "" && cfg.User != tt.user) || cfg.Password != tt.pw || cfg.Database != tt.db {
			t.Errorf("ConnString(%q): user %q password %q db %q, want %q %q %q", tt.in, cfg.User, cfg.Password, cfg.Database, tt.user, tt.pw, tt.db)
		}
		if cfg.TargetSessionAttrs != tt.tsa {
			t.Errorf("ConnString(%q): target_session_attrs %q, want %q", tt.in, cfg.TargetSessionAttrs, tt.tsa)
		}
		if got := strconv.Itoa(int(cfg.ConnectTimeout.Seconds())); got != tt.timeout {
			t.Errorf("ConnString(%q): connect_timeout %s, want %s", tt.in, got, tt.timeout)
		}
	}
	for _, bad := range []string{
		"postgres://h1:x,h2/fs",
		"postgres://h1:,h2/fs",
		"postgres://h1,,h2/fs",
		"postgres://[::1,h2/fs",
	} {
		if dsn, err := postgres.ConnString(bad); err == nil {
			t.Errorf("ConnString(%q) = %q, want an error", bad, dsn)
		}
	}
}

// TestOpenAcceptsEveryConnStringForm opens the test server through each
// form an operator may paste, with a dead host first where there are
// several: the connection must land on the live one.
func TestOpenAcceptsEveryConnStringForm(t *testing.T) {
	t.Parallel()
	base, err := pq.NewConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	h, p, d := base.Host, strconv.Itoa(int(base.Port)), strconv.Itoa(deadPort(t))
	he := url.PathEscape(h) // a socket directory's slashes, escaped for the authority
	ui := url.User(base.User)
	if base.Password != "" {
		ui = url.UserPassword(base.User, base.Password)
	}
	kvAuth := "user=" + base.User + " dbname=" + base.Database + " sslmode=disable"
	if base.Password != "" {
		kvAuth += " password='" + base.Password + "'"
	}
	u := "//" + ui.String() + "@"
	forms := map[string]string{
		"key=value":                   "host=" + h + " port=" + p + " " + kvAuth,
		"URL":                         "postgres:" + u + he + ":" + p + "/" + base.Database + "?sslmode=disable",
		"postgresql URL":              "postgresql:" + u + he + ":" + p + "/" + base.Database + "?sslmode=disable",
		"URL, host in the query":      "postgres:" + u + "/" + base.Database + "?sslmode=disable&host=" + url.QueryEscape(h) + "&port=" + p,
		"key=value, two hosts":        "host=" + h + "," + h + " port=" + d + "," + p + " " + kvAuth,
		"URL, ports in the query":     "postgres:" + u + he + "," + he + "/" + base.Database + "?sslmode=disable&port=" + d + "," + p,
		"URL of pg_autoctl show uri":  "postgres:" + u + he + ":" + d + "," + he + ":" + p + "/" + base.Database + "?target_session_attrs=read-write&sslmode=disable",
		"URL of hosts, no attributes": "postgres:" + u + he + ":" + d + "," + he + ":" + p + "/" + base.Database + "?sslmode=disable",
	}
	for name, dsn := range forms {
		db, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Errorf("%s (%s): %v", name, dsn, err)
			continue
		}
		var got string
		if err := db.Pool().Get(&got, "SELECT current_database()"); err != nil || got != base.Database {
			t.Errorf("%s: database %q (%v), want %q", name, got, err, base.Database)
		}
		if err := db.Ping(context.Background()); err != nil {
			t.Errorf("%s: ping: %v", name, err)
		}
		db.Close()
	}
}

// deadPort is a TCP port nothing listens on, with no socket file of its
// number either.
func deadPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
