package banksim

import (
	"bytes"
	"context"
	"strings"
	"testing"

	nacha "github.com/moov-io/ach"

	"github.com/fundsource/fundsource/internal/testing/nachatest"
)

// bank is a network over a MemoryExchange with the built-in rules.
type bank struct {
	x *MemoryExchange
	n *Network
}

func newBank() *bank {
	x := &MemoryExchange{}
	return &bank{x: x, n: &Network{Exchange: x, Rules: Sandbox}}
}

// step runs the network on date (YYYY-MM-DD).
func (b *bank) step(t *testing.T, date string) Summary {
	t.Helper()
	sum, err := b.n.Step(context.Background(), day(date))
	if err != nil {
		t.Fatalf("step on %s: %v", date, err)
	}
	return sum
}

// inbox is the inbox file name's bytes.
func (b *bank) inbox(t *testing.T, name string) []byte {
	t.Helper()
	for _, f := range b.x.Inbox() {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("no inbox file %s", name)
	return nil
}

// answers reads the answer files written on date, each checked as a bank's.
func (b *bank) answers(t *testing.T, date string) []*nacha.File {
	t.Helper()
	var out []*nacha.File
	for _, f := range b.x.Inbox() {
		if !strings.HasPrefix(f.Name, "achnet-"+strings.ReplaceAll(date, "-", "")+"-") || !strings.HasSuffix(f.Name, ".ach") {
			continue
		}
		file, err := nacha.NewReader(bytes.NewReader(f.Data)).Read()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if err := file.Validate(); err != nil {
			t.Fatalf("%s does not validate: %v", f.Name, err)
		}
		out = append(out, &file)
	}
	return out
}

// outboxFile is nachatest.OutboxFile.
func outboxFile(t *testing.T, effective string, deposits, web, ccd []string) []byte {
	return nachatest.OutboxFile(t, effective, deposits, web, ccd)
}
