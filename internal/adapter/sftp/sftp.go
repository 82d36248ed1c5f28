// Package sftp is the service's connection to its bank's SFTP server, the
// way every ODFI exchanges NACHA files: the originator uploads into
// outbound/ and polls inbound/ for returns, notifications of change and
// statements; the lab's ACH network (achnet) uses the same client from
// the bank's side.
//
// It speaks SFTP with github.com/pkg/sftp over golang.org/x/crypto/ssh:
// the SSH layer is the Go team's own (already a dependency for bcrypt),
// and pkg/sftp is the SFTP client Go programs use, including the ACH
// gateways that talk to banks; writing the protocol ourselves would be a
// parser of a binary protocol for no gain. The server's host key is
// checked against a known_hosts file (golang.org/x/crypto/ssh/knownhosts),
// never trusted on first use: a connection to a server whose key is not
// listed fails, so a redirected hostname cannot collect account numbers.
//
// An upload is written as NAME.part and renamed to NAME when complete
// (OpenSSH's posix-rename, which replaces), so the bank never picks up a
// half-written file. One connection is kept and dialed again after any
// failure; every operation has a deadline, so a server that stops
// answering delays the work of a run and never hangs it.
package sftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	gosftp "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Config is where the bank's server is and how to log in.
type Config struct {
	User string
	Addr string // host:port
	Path string // the folder holding outbound/ and inbound/
	// KeyFile is the client's private key (OpenSSH or PEM format,
	// unencrypted); KnownHosts the known_hosts file naming the server's
	// host key.
	KeyFile    string
	KnownHosts string
	// Timeout bounds a connection and each operation; 30 s when zero.
	Timeout time.Duration
}

// ParseURL reads sftp://user@host[:port]/path (port 22 by default).
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "sftp" || u.Host == "" || u.User == nil || u.User.Username() == "" {
		return Config{}, errors.New("ACH_SFTP_URL must look like sftp://user@host:port/path")
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		return Config{}, errors.New("ACH_SFTP_URL must not carry a password: the service logs in with ACH_SFTP_KEY_FILE")
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "22")
	}
	p := u.Path
	if p == "" {
		p = "."
	}
	return Config{User: u.User.Username(), Addr: addr, Path: p}, nil
}

// Redacted is the server's address for logs: user, host and folder.
func (c Config) Redacted() string { return "sftp://" + c.User + "@" + c.Addr + c.Path }

// File is a file in a listed folder.
type File struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// Client is a connection to one server, dialed when first needed and
// again after a failure. Safe for concurrent use: operations take turns.
type Client struct {
	cfg    Config
	auth   ssh.Signer
	hosts  ssh.HostKeyCallback
	mu     sync.Mutex
	conn   net.Conn
	ssh    *ssh.Client
	client *gosftp.Client
}

// New reads the key and the known hosts; it does not connect.
func New(cfg Config) (*Client, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.KeyFile == "" || cfg.KnownHosts == "" {
		return nil, errors.New("ACH_SFTP_URL needs ACH_SFTP_KEY_FILE (the private key) and ACH_SFTP_KNOWN_HOSTS (the server's host key)")
	}
	key, err := os.ReadFile(cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("ACH_SFTP_KEY_FILE: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("ACH_SFTP_KEY_FILE: %w", err)
	}
	hosts, err := knownhosts.New(cfg.KnownHosts)
	if err != nil {
		return nil, fmt.Errorf("ACH_SFTP_KNOWN_HOSTS: %w", err)
	}
	return &Client{cfg: cfg, auth: signer, hosts: hosts}, nil
}

// Config is the client's configuration.
func (c *Client) Config() Config { return c.cfg }

// Close ends the connection, if any.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop()
	return nil
}

func (c *Client) drop() {
	if c.client != nil {
		c.client.Close()
	}
	if c.ssh != nil {
		c.ssh.Close()
	}
	c.client, c.ssh, c.conn = nil, nil, nil
}

// do runs fn on the connection under a deadline, dialing first when
// needed; after an error the connection is dropped, so the next operation
// dials again (a server restarted meanwhile is found again).
func (c *Client) do(ctx context.Context, what string, fn func(*gosftp.Client) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.client == nil {
		if err := c.dial(ctx); err != nil {
			return fmt.Errorf("%s: connect to %s: %w", what, c.cfg.Redacted(), err)
		}
	}
	deadline := time.Now().Add(c.cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.conn.SetDeadline(deadline)
	err := fn(c.client)
	if c.conn != nil {
		_ = c.conn.SetDeadline(time.Time{})
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.drop()
	}
	if err != nil {
		return fmt.Errorf("%s on %s: %w", what, c.cfg.Redacted(), err)
	}
	return nil
}

func (c *Client) dial(ctx context.Context) error {
	d := net.Dialer{Timeout: c.cfg.Timeout}
	conn, err := d.DialContext(ctx, "tcp", c.cfg.Addr)
	if err != nil {
		return err
	}
	_ = conn.SetDeadline(time.Now().Add(c.cfg.Timeout))
	cc, chans, reqs, err := ssh.NewClientConn(conn, c.cfg.Addr, &ssh.ClientConfig{
		User: c.cfg.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(c.auth)},
		HostKeyCallback: c.hosts, Timeout: c.cfg.Timeout,
	})
	if err != nil {
		conn.Close()
		return err
	}
	sc := ssh.NewClient(cc, chans, reqs)
	client, err := gosftp.NewClient(sc)
	if err != nil {
		sc.Close()
		return err
	}
	_ = conn.SetDeadline(time.Time{})
	c.conn, c.ssh, c.client = conn, sc, client
	return nil
}

// List lists the regular files of dir (relative to the configured path),
// by name, leaving out hidden files and uploads in progress (.part); a
// missing folder lists nothing.
func (c *Client) List(ctx context.Context, dir string) ([]File, error) {
	var out []File
	err := c.do(ctx, "list "+dir, func(s *gosftp.Client) error {
		infos, err := s.ReadDir(c.abs(dir))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, fi := range infos {
			n := fi.Name()
			if !fi.Mode().IsRegular() || strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".part") {
				continue
			}
			out = append(out, File{Name: n, Size: fi.Size(), ModTime: fi.ModTime()})
		}
		return nil
	})
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}

// Read downloads dir/name.
func (c *Client) Read(ctx context.Context, dir, name string) ([]byte, error) {
	var data []byte
	err := c.do(ctx, "download "+path.Join(dir, name), func(s *gosftp.Client) error {
		f, err := s.Open(c.abs(dir, name))
		if err != nil {
			return err
		}
		defer f.Close()
		data, err = io.ReadAll(f)
		return err
	})
	return data, err
}

// Write uploads data to dir/name: as name.part first, renamed over name
// once all of it is on the server.
func (c *Client) Write(ctx context.Context, dir, name string, data []byte) error {
	return c.do(ctx, "upload "+path.Join(dir, name), func(s *gosftp.Client) error {
		if err := s.MkdirAll(c.abs(dir)); err != nil {
			return err
		}
		part := c.abs(dir, name+".part")
		f, err := s.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return s.PosixRename(part, c.abs(dir, name))
	})
}

// Move moves dir/name into toDir (created when missing).
func (c *Client) Move(ctx context.Context, dir, name, toDir string) error {
	return c.do(ctx, "move "+path.Join(dir, name), func(s *gosftp.Client) error {
		if err := s.MkdirAll(c.abs(toDir)); err != nil {
			return err
		}
		return s.PosixRename(c.abs(dir, name), c.abs(toDir, name))
	})
}

func (c *Client) abs(parts ...string) string {
	return path.Join(append([]string{c.cfg.Path}, parts...)...)
}
