package audit

import (
	"time"

	"context"

	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Store is the persistence the audit log needs.
type Store interface {
	Recorder
	// AuditEvents returns up to p.Limit+1 events of scope's environment
	// and of the account as a whole, newest first; errs.NotFound for an
	// unknown cursor.
	AuditEvents(ctx context.Context, scope tenant.Scope, p paging.Page) ([]Event, error)
	// AuditChain returns up to limit of the merchant's events with a
	// sequence number above after, in sequence order.
	AuditChain(ctx context.Context, merchantID string, after int64, limit int) ([]Event, error)
	// AuditHead returns the merchant's chain head (0 and nil when none).
	AuditHead(ctx context.Context, merchantID string) (seq int64, hash []byte, err error)
	// AuditMerchants lists every merchant that has a chain head or events.
	AuditMerchants(ctx context.Context) ([]string, error)
	HeadStore
}

// Service reads the audit log.
type Service struct {
	store Store
	key   []byte // AUDIT_KEY
}

// NewService returns a Service that verifies chains under key.
func NewService(store Store, key []byte) *Service { return &Service{store: store, key: key} }

// List returns a page of scope's events (its environment's and the
// account's), newest first.
func (s *Service) List(ctx context.Context, scope tenant.Scope, p paging.Page) ([]Event, bool, error) {
	evs, err := s.store.AuditEvents(ctx, scope, p)
	return paging.Result(evs, err, p)
}

// verifyBatch is how many events Verify reads at a time.
const verifyBatch = 1000

// Verify checks one merchant's chain from its first event to its head,
// under the key and against the merchant's checkpoints, and returns the
// first break, or nil.
func (s *Service) Verify(ctx context.Context, merchantID string, checkpoints []Checkpoint) (*Break, error) {
	// The head first: events appended while the chain is read then only
	// lengthen it beyond the head, which the read stops at.
	seq, hash, err := s.store.AuditHead(ctx, merchantID)
	if err != nil {
		return nil, err
	}
	v := Verifier{Key: s.key, Checkpoints: checkpoints}
	if seq == 0 {
		// No head: there must be no events either.
		evs, err := s.store.AuditChain(ctx, merchantID, 0, 1)
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 {
			return v.End(0, nil), nil
		}
		return &Break{Seq: 1, EventID: evs[0].ID, Reason: "the chain's head is missing"}, nil
	}
	for after := int64(0); after < seq; {
		evs, err := s.store.AuditChain(ctx, merchantID, after, int(min(verifyBatch, seq-after)))
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			if b := v.Next(e); b != nil {
				return b, nil
			}
			after = e.Seq
		}
		if len(evs) == 0 {
			break
		}
	}
	return v.End(seq, hash), nil
}

// Merchants lists the merchants that have an audit log.
func (s *Service) Merchants(ctx context.Context) ([]string, error) {
	return s.store.AuditMerchants(ctx)
}

// Checkpointer returns the writer of the checkpoint file at path.
func (s *Service) Checkpointer(path string, now func() time.Time) *Checkpointer {
	return NewCheckpointer(path, s.store, now)
}
