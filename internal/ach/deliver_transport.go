package ach

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Transports: how built files reach the bank.
const (
	TransportFolder = "folder" // the outbox folder; an operator's job moves it on
	TransportSFTP   = "sftp"   // the bank's SFTP server (package sftp)
	// TransportTestClock is a sandbox test clock's simulated bank, kept
	// in the database.
	TransportTestClock = "test_clock"
)

// Transport carries files between the service and its bank: built files
// out, returns, notifications of change and statements in. The folder
// (Folders) and the bank's SFTP server (package sftp) are the two; the
// delivery and the polling above them are one code path.
type Transport interface {
	// Deliver puts a built file where the bank picks it up, whole or not
	// at all (written under a temporary name, renamed when complete);
	// delivering the same name again replaces it.
	Deliver(ctx context.Context, name string, data []byte) error
	// Inbound lists the files the bank has left for the service.
	Inbound(ctx context.Context) ([]InboundFile, error)
	// Fetch reads one of them.
	Fetch(ctx context.Context, name string) ([]byte, error)
	// Reject moves a file the service cannot read out of the listing
	// (into a rejected/ folder beside it), for a person to look at.
	Reject(ctx context.Context, name string) error
	// Kind is TransportFolder, TransportSFTP or TransportTestClock.
	Kind() string
}

// InboundFile is a listed inbound file.
type InboundFile struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// Folders is the Transport of the local disk: files go into Outbox,
// answers come from Inbox, unreadable ones move to Inbox/rejected.
type Folders struct{ Outbox, Inbox string }

// Deliver writes the file into the outbox atomically.
func (f Folders) Deliver(_ context.Context, name string, data []byte) error {
	return writeAtomically(f.Outbox, name, data)
}

// Inbound lists the inbox's regular files, leaving out hidden ones and
// uploads in progress; a missing inbox lists nothing.
func (f Folders) Inbound(_ context.Context) ([]InboundFile, error) {
	entries, err := os.ReadDir(f.Inbox)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []InboundFile
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".part") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		out = append(out, InboundFile{Name: n, Size: info.Size(), ModTime: info.ModTime()})
	}
	slices.SortFunc(out, func(a, b InboundFile) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Fetch reads Inbox/name.
func (f Folders) Fetch(_ context.Context, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(f.Inbox, filepath.Base(name)))
}

// Reject moves Inbox/name into Inbox/rejected.
func (f Folders) Reject(_ context.Context, name string) error {
	dir := filepath.Join(f.Inbox, "rejected")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Rename(filepath.Join(f.Inbox, filepath.Base(name)), filepath.Join(dir, filepath.Base(name)))
}

// Kind is TransportFolder.
func (f Folders) Kind() string { return TransportFolder }

// String names the folders, for logs.
func (f Folders) String() string { return f.Outbox + " (inbox " + f.Inbox + ")" }

// Transport describes where files go, for operators: the folder or the
// server (never a key).
func (o *Originator) Transport() string {
	if s, ok := o.transport.(fmt.Stringer); ok {
		return o.transport.Kind() + " " + s.String()
	}
	return o.transport.Kind()
}

// writeAtomically puts data at dir/name so that a reader of the folder sees
// either nothing or the whole file: a temp file in the same folder, fsync,
// rename, then fsync of the folder so the rename survives a crash.
func writeAtomically(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename this finds nothing
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// The file holds account numbers and micro-deposit amounts: its owner
	// (the service's user, and the transfer job run as it) alone may read it.
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
