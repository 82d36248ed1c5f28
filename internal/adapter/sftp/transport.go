package sftp

import (
	"context"

	"github.com/fundsource/fundsource/internal/ach"
)

// The bank's folders, under the configured path.
const (
	Outbound = "outbound"
	Inbound  = "inbound"
	Rejected = "inbound/rejected"
)

// Transport is ach.Transport over the bank's SFTP server: files go to
// outbound/, answers come from inbound/, a file the service cannot read
// is moved to inbound/rejected/.
type Transport struct{ Client *Client }

var _ ach.Transport = Transport{}

// Deliver uploads a built file to outbound/.
func (t Transport) Deliver(ctx context.Context, name string, data []byte) error {
	return t.Client.Write(ctx, Outbound, name, data)
}

// Inbound lists inbound/.
func (t Transport) Inbound(ctx context.Context) ([]ach.InboundFile, error) {
	files, err := t.Client.List(ctx, Inbound)
	out := make([]ach.InboundFile, len(files))
	for i, f := range files {
		out[i] = ach.InboundFile{Name: f.Name, Size: f.Size, ModTime: f.ModTime}
	}
	return out, err
}

// Fetch downloads inbound/name.
func (t Transport) Fetch(ctx context.Context, name string) ([]byte, error) {
	return t.Client.Read(ctx, Inbound, name)
}

// Reject moves inbound/name to inbound/rejected/.
func (t Transport) Reject(ctx context.Context, name string) error {
	return t.Client.Move(ctx, Inbound, name, Rejected)
}

// Kind is "sftp".
func (t Transport) Kind() string { return ach.TransportSFTP }

// String is the server's address, for logs.
func (t Transport) String() string { return t.Client.Config().Redacted() }
