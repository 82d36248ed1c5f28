package banksim

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// File is one file the originator delivered: its name in the outbox and
// its bytes. The network tells files apart by name and SHA-256 of Data
// alone (the package doc, Idempotence), so an Exchange gives nothing else.
type File struct {
	Name string
	Data []byte
}

// Exchange is where the network reads the originator's files and writes
// its answers, and keeps its memory. A folder pair, the bank's SFTP
// server (package internal/lab/achnet) and MemoryExchange are Exchanges.
type Exchange interface {
	// Outbox is the originator's NACHA files as delivered, by name.
	Outbox(ctx context.Context) ([]File, error)
	// Deliver puts an answer file or a statement called name into the
	// originator's inbox, whole or not at all (replacing a file of that
	// name), and says where it went, for the summary.
	Deliver(ctx context.Context, name string, data []byte) (string, error)
	// LoadState is the network's memory as SaveState last kept it; nil
	// when none was kept yet.
	LoadState(ctx context.Context) ([]byte, error)
	// SaveState keeps the network's memory (JSON), whole or not at all.
	SaveState(ctx context.Context, data []byte) error
}

// MemoryExchange is an Exchange held in memory: the originator puts its
// files with Put and reads the answers with Inbox. Its zero value is an
// empty exchange; it is safe for concurrent use, and every byte slice
// going in or out is a copy, so no caller sees another's later writes.
type MemoryExchange struct {
	mu     sync.Mutex
	outbox map[string][]byte // by name; guarded by mu
	inbox  map[string][]byte // by name; guarded by mu
	state  []byte            // nil until saved; guarded by mu
}

var _ Exchange = (*MemoryExchange)(nil)

// Put delivers the originator's file name into the outbox, replacing a
// file of that name.
func (m *MemoryExchange) Put(name string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.outbox == nil {
		m.outbox = map[string][]byte{}
	}
	m.outbox[name] = slices.Clone(data)
}

// Inbox is the files the network delivered, by name.
func (m *MemoryExchange) Inbox() []File {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sorted(m.inbox)
}

// Outbox is the files Put delivered, by name.
func (m *MemoryExchange) Outbox(context.Context) ([]File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sorted(m.outbox), nil
}

// Deliver keeps data as the inbox's file name; where it went is name.
func (m *MemoryExchange) Deliver(_ context.Context, name string, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inbox == nil {
		m.inbox = map[string][]byte{}
	}
	m.inbox[name] = slices.Clone(data)
	return name, nil
}

// LoadState is the state SaveState kept, nil before the first.
func (m *MemoryExchange) LoadState(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.state), nil
}

// SaveState keeps data as the network's state.
func (m *MemoryExchange) SaveState(_ context.Context, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state = slices.Clone(data)
	if m.state == nil {
		m.state = []byte{} // saved, though empty: not "none yet"
	}
	return nil
}

func sorted(files map[string][]byte) []File {
	out := make([]File, 0, len(files))
	for _, name := range slices.Sorted(maps.Keys(files)) {
		out = append(out, File{Name: name, Data: slices.Clone(files[name])})
	}
	return out
}
