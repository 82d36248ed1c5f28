package sftp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/sftp"
	"github.com/fundsource/fundsource/internal/testing/sftptest"
)

func client(t *testing.T, srv *sftptest.Server, knownHosts string) *sftp.Client {
	t.Helper()
	cfg, err := sftp.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.KeyFile, cfg.KnownHosts, cfg.Timeout = srv.KeyFile, knownHosts, 5*time.Second
	c, err := sftp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestWriteListReadMove against a real sshd: an upload appears whole under
// its name, an upload in progress (.part) and hidden files are not
// listed, a file moves aside, a missing folder lists nothing.
func TestWriteListReadMove(t *testing.T) {
	srv := sftptest.New(t)
	c := client(t, srv, srv.KnownHosts)
	ctx := context.Background()
	if files, err := c.List(ctx, "inbound"); err != nil || len(files) != 0 {
		t.Fatalf("list of a missing folder = %v, %v", files, err)
	}
	if err := c.Write(ctx, "inbound", "a.ach", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"b.ach.part", ".hidden"} {
		if err := os.WriteFile(filepath.Join(srv.Root, "inbound", n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, err := c.List(ctx, "inbound")
	if err != nil || len(files) != 1 || files[0].Name != "a.ach" || files[0].Size != 5 {
		t.Fatalf("list = %+v, %v", files, err)
	}
	if data, err := c.Read(ctx, "inbound", "a.ach"); err != nil || string(data) != "hello" {
		t.Fatalf("read = %q, %v", data, err)
	}
	// Written again: replaced whole.
	if err := c.Write(ctx, "inbound", "a.ach", []byte("bye")); err != nil {
		t.Fatal(err)
	}
	if data, _ := c.Read(ctx, "inbound", "a.ach"); string(data) != "bye" {
		t.Fatalf("after a second write = %q", data)
	}
	if err := c.Move(ctx, "inbound", "a.ach", "inbound/rejected"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(srv.Root, "inbound", "rejected", "a.ach")); err != nil {
		t.Fatalf("not moved: %v", err)
	}
}

// TestUnknownHostKeyIsRefused: a server whose key the known_hosts file
// does not list is never trusted, not even on first use.
func TestUnknownHostKeyIsRefused(t *testing.T) {
	srv := sftptest.New(t)
	other := sftptest.New(t) // another server's key, under this one's address
	known, err := os.ReadFile(other.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "known_hosts")
	fields := strings.Fields(string(known))
	line := fmt.Sprintf("[127.0.0.1]:%d %s %s\n", srv.Port, fields[1], fields[2])
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	c := client(t, srv, path)
	err = c.Write(context.Background(), "outbound", "x.ach", []byte("secret"))
	if err == nil || !strings.Contains(err.Error(), "key") {
		t.Fatalf("write to a server with an unknown key = %v; want a host key error", err)
	}
	if _, err := os.Stat(filepath.Join(srv.Root, "outbound", "x.ach")); err == nil {
		t.Error("the file reached the server")
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct{ in, addr, path, err string }{
		{"sftp://ach@bank.example:2222/fundsource", "bank.example:2222", "/fundsource", ""},
		{"sftp://ach@bank.example/x", "bank.example:22", "/x", ""},
		{"sftp://bank.example/x", "", "", "sftp://user@host"},
		{"sftp://ach:pw@bank.example/x", "", "", "password"},
		{"https://ach@bank.example/x", "", "", "sftp://user@host"},
	} {
		got, err := sftp.ParseURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseURL(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.Addr != tc.addr || got.Path != tc.path || got.User != "ach" {
			t.Errorf("ParseURL(%q) = %+v, %v", tc.in, got, err)
		}
	}
}
