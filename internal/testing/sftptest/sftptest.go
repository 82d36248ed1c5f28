// Package sftptest starts a real OpenSSH server (Debian's openssh-server,
// /usr/sbin/sshd) on loopback that serves only SFTP (internal-sftp), the
// way pgtest starts PostgreSQL: a throwaway server with its own config,
// host key and authorized_keys in a temporary folder. Tests and the chaos
// suite use it as the bank's SFTP server; it can be stopped and started
// again on the same port, so a test can take the bank away and bring it
// back.
//
// The server runs as the current user (root on CI, where sshd may also
// switch users; any user otherwise, who can then log in only as itself),
// with StrictModes off because the temporary folder's modes are the
// test's, not a home directory's.
package sftptest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSHD is where Debian's openssh-server puts the server.
const SSHD = "/usr/sbin/sshd"

// Server is one throwaway sshd serving SFTP on 127.0.0.1.
type Server struct {
	Dir        string // the temporary folder: config, keys, the bank's files
	Root       string // the folder a client's URL names (Dir/bank)
	User       string
	Port       int
	KeyFile    string // the client's private key (OpenSSH format, 0600)
	KnownHosts string // a known_hosts file naming the server's host key

	mu  sync.Mutex
	cmd *exec.Cmd
	log string
}

// URL is the ACH_SFTP_URL of the server's root folder.
func (s *Server) URL() string {
	return fmt.Sprintf("sftp://%s@127.0.0.1:%d%s", s.User, s.Port, s.Root)
}

// New starts a server for t and stops it when t ends; it fails t with
// what to install when sshd is missing.
func New(t testing.TB) *Server {
	t.Helper()
	s, err := Start(t.TempDir())
	if err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Start writes keys and a config into dir and starts the server.
func Start(dir string) (*Server, error) {
	if _, err := os.Stat(SSHD); err != nil {
		return nil, fmt.Errorf("%s is missing: install Debian's openssh-server (apt-get install -y openssh-server): %w", SSHD, err)
	}
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Root: filepath.Join(dir, "bank"), User: u.Username,
		KeyFile: filepath.Join(dir, "client_key"), KnownHosts: filepath.Join(dir, "known_hosts")}
	if err := os.MkdirAll(s.Root, 0o700); err != nil {
		return nil, err
	}
	hostPub, err := writeKey(filepath.Join(dir, "host_key"))
	if err != nil {
		return nil, err
	}
	clientPub, err := writeKey(s.KeyFile)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), ssh.MarshalAuthorizedKey(clientPub), 0o600); err != nil {
		return nil, err
	}
	if s.Port, err = freePort(); err != nil {
		return nil, err
	}
	known := fmt.Sprintf("[127.0.0.1]:%d %s", s.Port, ssh.MarshalAuthorizedKey(hostPub))
	if err := os.WriteFile(s.KnownHosts, []byte(known), 0o600); err != nil {
		return nil, err
	}
	config := strings.Join([]string{
		fmt.Sprintf("ListenAddress 127.0.0.1:%d", s.Port),
		"HostKey " + filepath.Join(dir, "host_key"),
		"PidFile " + filepath.Join(dir, "sshd.pid"),
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"PermitRootLogin prohibit-password",
		"AllowTcpForwarding no",
		"X11Forwarding no",
		"Subsystem sftp internal-sftp",
		"ForceCommand internal-sftp",
		"LogLevel ERROR",
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(config), 0o600); err != nil {
		return nil, err
	}
	// sshd refuses to start without its privilege separation folder, which
	// only a running system service creates.
	if os.Geteuid() == 0 {
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	return s, s.Restart()
}

// Restart starts the server (again) on its port.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	logFile := filepath.Join(s.Dir, "sshd.log")
	s.log = logFile
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(SSHD, "-D", "-e", "-f", filepath.Join(s.Dir, "sshd_config"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start %s: %w", SSHD, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); out.Close(); close(exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			s.cmd = cmd
			return nil
		}
		select {
		case <-exited:
			data, _ := os.ReadFile(logFile)
			return fmt.Errorf("sshd exited at start: %s", strings.TrimSpace(string(data)))
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return errors.New("sshd did not listen within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the server; its port and files stay for Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	// The listener is gone once the process is; wait for it so a
	// Restart can bind the port again.
	for range 100 {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), 100*time.Millisecond)
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	s.cmd = nil
}

// writeKey writes a new ed25519 private key to path in OpenSSH's format
// and returns its public key.
func writeKey(path string) (ssh.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return ssh.NewPublicKey(pub)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
