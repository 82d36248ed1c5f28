package audit

import (
	"fmt"
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
	// AuditEventsAbout returns up to limit events of scope's environment
	// whose details name one of refs' objects, oldest first.
	AuditEventsAbout(ctx context.Context, scope tenant.Scope, refs Refs, limit int) ([]Event, error)
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
	if err != nil {
		err = fmt.Errorf("list the audit events of merchant %s: %w", scope.MerchantID, err)
	}
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
		return nil, fmt.Errorf("read the audit chain head of merchant %s: %w", merchantID, err)
	}
	v := Verifier{Key: s.key, Checkpoints: checkpoints}
	if seq == 0 {
		// No head: there must be no events either.
		evs, err := s.store.AuditChain(ctx, merchantID, 0, 1)
		if err != nil {
			return nil, fmt.Errorf("read the audit chain of merchant %s: %w", merchantID, err)
		}
		if len(evs) == 0 {
			return v.End(0, nil), nil
		}
		return &Break{Seq: 1, EventID: evs[0].ID, Reason: "the chain's head is missing"}, nil
	}
	for after := int64(0); after < seq; {
		evs, err := s.store.AuditChain(ctx, merchantID, after, int(min(verifyBatch, seq-after)))
		if err != nil {
			return nil, fmt.Errorf("read the audit chain of merchant %s after event %d: %w", merchantID, after, err)
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
	ids, err := s.store.AuditMerchants(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the merchants with an audit log: %w", err)
	}
	return ids, nil
}

// Checkpointer returns the writer of the checkpoint file at path.
func (s *Service) Checkpointer(path string, now func() time.Time) *Checkpointer {
	return NewCheckpointer(path, s.store, now)
}

// Refs name the objects of a disputed payment whose events About finds:
// an event is about them when its details name one of them under the key
// a use case records it with ("" names nothing).
type Refs struct {
	PaymentID string // details.payment_id
	MandateID string // details.mandate_id
	SourceID  string // details.funding_source_id
}

// MaxAbout bounds About's answer. A source gathers few events (an unblock
// at most once a year, a revocation per mandate), so the bound is never
// reached in practice; it keeps a hand-made flood from making the answer
// unbounded.
const MaxAbout = 500

// About returns the events of scope's environment about refs' payment,
// mandate or funding source, oldest first: what a merchant shows of who
// changed their authorization (a revoked mandate, a lifted block) when a
// debit is disputed.
func (s *Service) About(ctx context.Context, scope tenant.Scope, refs Refs) ([]Event, error) {
	if refs == (Refs{}) {
		return []Event{}, nil
	}
	evs, err := s.store.AuditEventsAbout(ctx, scope, refs, MaxAbout)
	if err != nil {
		return nil, fmt.Errorf("read the audit events of merchant %s about %+v: %w", scope.MerchantID, refs, err)
	}
	if evs == nil {
		evs = []Event{}
	}
	return evs, nil
}
