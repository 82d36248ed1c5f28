package achnet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fundsource/fundsource/internal/adapter/banksim"
	"github.com/fundsource/fundsource/internal/adapter/sftp"
	"github.com/fundsource/fundsource/internal/core/calendar"
)

// Network is the local ACH network between an originator's outbox and its
// inbox of returns and notifications of change: banksim's network over
// two folders, or over the bank's SFTP server, with its state in a file.
type Network struct {
	Outbox string // the files the originator writes
	Inbox  string // where the answers go
	// SFTP, when set, replaces both folders: the network reads outbound/
	// and writes inbound/ on the bank's SFTP server, as its client.
	SFTP  *sftp.Client
	State string // the network's memory (a JSON file)
	Rules banksim.Rules
}

// Step runs the network on date (banksim's Network.Step).
func (n *Network) Step(date calendar.Date) (banksim.Summary, error) {
	var x banksim.Exchange = folders{outbox: n.Outbox, inbox: n.Inbox, stateFile: stateFile(n.State)}
	if n.SFTP != nil {
		x = server{client: n.SFTP, stateFile: stateFile(n.State)}
	}
	sum, err := (&banksim.Network{Exchange: x, Rules: n.Rules}).Step(context.Background(), date)
	if se := (*banksim.StateError)(nil); errors.As(err, &se) {
		err = fmt.Errorf("state file %s: %w", n.State, se.Err)
	}
	return sum, err
}

// folders is the exchange of two local folders: the originator's outbox
// and its inbox.
type folders struct {
	outbox, inbox string
	stateFile
}

// Outbox reads the originator's NACHA files (*.ach) from the outbox
// folder, by name.
func (f folders) Outbox(context.Context) ([]banksim.File, error) {
	names, err := filepath.Glob(filepath.Join(f.outbox, "*.ach"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []banksim.File
	for _, p := range names {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, banksim.File{Name: filepath.Base(p), Data: data})
	}
	return out, nil
}

// Deliver writes an answer into the inbox folder and returns its path.
func (f folders) Deliver(_ context.Context, name string, data []byte) (string, error) {
	if err := writeAtomically(f.inbox, name, data); err != nil {
		return "", err
	}
	return filepath.Join(f.inbox, name), nil
}

// server is the exchange of the bank's SFTP server, the network being its
// client: the originator's files in outbound/, the answers into inbound/.
type server struct {
	client *sftp.Client
	stateFile
}

// Outbox reads the originator's NACHA files (*.ach) from outbound/, by
// name.
func (s server) Outbox(ctx context.Context) ([]banksim.File, error) {
	files, err := s.client.List(ctx, sftp.Outbound)
	if err != nil {
		return nil, err
	}
	var out []banksim.File
	for _, f := range files {
		if !strings.HasSuffix(f.Name, ".ach") {
			continue
		}
		data, err := s.client.Read(ctx, sftp.Outbound, f.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, banksim.File{Name: f.Name, Data: data})
	}
	return out, nil
}

// Deliver uploads an answer into inbound/ (written as .part and renamed)
// and returns where it went.
func (s server) Deliver(ctx context.Context, name string, data []byte) (string, error) {
	if err := s.client.Write(ctx, sftp.Inbound, name, data); err != nil {
		return "", err
	}
	return path.Join(sftp.Inbound, name), nil
}

// stateFile keeps the network's memory in a local file, whichever the
// exchange of files.
type stateFile string

// LoadState reads the file; a missing one is no state yet.
func (p stateFile) LoadState(context.Context) ([]byte, error) {
	data, err := os.ReadFile(string(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// SaveState replaces the file whole.
func (p stateFile) SaveState(_ context.Context, data []byte) error {
	return writeAtomically(filepath.Dir(string(p)), filepath.Base(string(p)), data)
}

// writeAtomically puts data at dir/name so that a reader of the folder
// (the import) sees either nothing or the whole file; only its owner may
// read it, as it holds account numbers.
func writeAtomically(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
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
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}
