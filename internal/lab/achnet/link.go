package achnet

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fundsource/fundsource/internal/adapter/sftp"
)

// deliveredFile is one file the originator delivered.
type deliveredFile struct {
	name string
	data []byte
}

// outboxFiles reads the originator's NACHA files (*.ach): from the bank's
// SFTP server's outbound/ when the network serves over SFTP, else from
// the outbox folder.
func (n *Network) outboxFiles() ([]deliveredFile, error) {
	var out []deliveredFile
	if n.SFTP != nil {
		ctx := context.Background()
		files, err := n.SFTP.List(ctx, sftp.Outbound)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if !strings.HasSuffix(f.Name, ".ach") {
				continue
			}
			data, err := n.SFTP.Read(ctx, sftp.Outbound, f.Name)
			if err != nil {
				return nil, err
			}
			out = append(out, deliveredFile{name: f.Name, data: data})
		}
		return out, nil
	}
	names, err := filepath.Glob(filepath.Join(n.Outbox, "*.ach"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	for _, p := range names {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, deliveredFile{name: filepath.Base(p), data: data})
	}
	return out, nil
}

// deliver puts an answer into the originator's inbox (inbound/ over
// SFTP, written as .part and renamed) and returns where it went.
func (n *Network) deliver(name string, data []byte) (string, error) {
	if n.SFTP != nil {
		if err := n.SFTP.Write(context.Background(), sftp.Inbound, name, data); err != nil {
			return "", err
		}
		return path.Join(sftp.Inbound, name), nil
	}
	if err := writeAtomically(n.Inbox, name, data); err != nil {
		return "", err
	}
	return filepath.Join(n.Inbox, name), nil
}
