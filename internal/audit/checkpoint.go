package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Checkpoint is one line of the checkpoint file: a merchant's chain head
// as it was at Time.
type Checkpoint struct {
	MerchantID string    `json:"merchant_id"`
	Seq        int64     `json:"seq"`
	Hash       string    `json:"hash"` // hex, as HashHex
	Time       time.Time `json:"time"` // UTC
}

// Head is a merchant's chain head as the store keeps it.
type Head struct {
	MerchantID string
	Seq        int64
	Hash       []byte
}

// ReadCheckpoints reads the checkpoint file at path into each merchant's
// checkpoints in file order. A missing file holds none; a line that does
// not parse is an error naming it (a half-written last line, from a crash
// mid-append, is skipped).
func ReadCheckpoints(path string) (map[string][]Checkpoint, error) {
	out := map[string][]Checkpoint{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read audit checkpoints: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var bad int
	for n := 1; sc.Scan(); n++ {
		if bad != 0 {
			return nil, fmt.Errorf("read audit checkpoints: %s line %d is not a checkpoint", path, bad)
		}
		var c Checkpoint
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil || c.MerchantID == "" || c.Seq < 1 {
			bad = n
			continue
		}
		out[c.MerchantID] = append(out[c.MerchantID], c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read audit checkpoints: %w", err)
	}
	return out, nil
}

// HeadStore lists every merchant's chain head.
type HeadStore interface {
	AuditHeads(ctx context.Context) ([]Head, error)
}

// CheckpointInterval is how often the service writes checkpoints.
const CheckpointInterval = time.Minute

// Checkpointer appends each merchant's chain head to the checkpoint file
// when it changed since the last line written for it. It starts from the
// file's last line per merchant, so a restart writes no duplicates.
// Several processes on one file may each write a head once: a repeated
// line says nothing new and verifies the same. Appends of whole lines in
// one write keep the lines of processes apart.
type Checkpointer struct {
	path  string
	store HeadStore
	now   func() time.Time

	mu   sync.Mutex        // guards last
	last map[string]string // merchant id → hash hex of its last line
}

// NewCheckpointer returns a Checkpointer writing to path.
func NewCheckpointer(path string, store HeadStore, now func() time.Time) *Checkpointer {
	return &Checkpointer{path: path, store: store, now: now}
}

// Write appends the heads that changed and returns how many it wrote.
func (c *Checkpointer) Write(ctx context.Context) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		cps, err := ReadCheckpoints(c.path)
		if err != nil {
			return 0, err
		}
		c.last = map[string]string{}
		for id, list := range cps {
			c.last[id] = list[len(list)-1].Hash
		}
	}
	heads, err := c.store.AuditHeads(ctx)
	if err != nil {
		return 0, fmt.Errorf("write audit checkpoints: %w", err)
	}
	var buf []byte
	at := c.now().UTC().Truncate(time.Second)
	var written []Head
	for _, h := range heads {
		if h.Seq < 1 || c.last[h.MerchantID] == HashHex(h.Hash) {
			continue
		}
		line, _ := json.Marshal(Checkpoint{MerchantID: h.MerchantID, Seq: h.Seq, Hash: HashHex(h.Hash), Time: at})
		buf = append(append(buf, line...), '\n')
		written = append(written, h)
	}
	if len(buf) == 0 {
		return 0, nil
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return 0, fmt.Errorf("write audit checkpoints: %w", err)
	}
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("write audit checkpoints: %w", err)
	}
	_, err = f.Write(buf)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("write audit checkpoints: %w", err)
	}
	for _, h := range written {
		c.last[h.MerchantID] = HashHex(h.Hash)
	}
	return len(written), nil
}
