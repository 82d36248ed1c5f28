package hostedlink_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/hostedlink"
	"github.com/fundsource/fundsource/internal/merchant"
)

// countingMerchants is the real merchant service, counting link lookups.
type countingMerchants struct {
	hostedlink.Merchants
	owners atomic.Int32
}

func (m *countingMerchants) LinkOwner(ctx context.Context, publicKey string) (merchant.LinkOwner, error) {
	m.owners.Add(1)
	return m.Merchants.LinkOwner(ctx, publicKey)
}

// countingSources is the real funding service, counting source reads.
type countingSources struct {
	hostedlink.Sources
	gets atomic.Int32
}

func (s *countingSources) Get(ctx context.Context, scope tenant.Scope, id string) (funding.Source, error) {
	s.gets.Add(1)
	return s.Sources.Get(ctx, scope, id)
}

// TestRefusedVerifyShowsTheSourceItLeft: a wrong guess resolves the link
// once (one owner lookup, one source read) and the page it shows is the
// source as the refusal left it, as stored: an attempt fewer after each
// wrong guess, Failed after the last.
func TestRefusedVerifyShowsTheSourceItLeft(t *testing.T) {
	t.Parallel()
	svc := services(t)
	acme := newLinked(t, "acme", svc)
	ctx := context.Background()
	merchants, sources := &countingMerchants{Merchants: svc.Merchants}, &countingSources{Sources: svc.Funding}
	links := hostedlink.NewService(merchants, sources, svc.Now)
	cents, _, err := svc.Funding.SandboxAmounts(ctx, acme.scope, acme.link.SourceID)
	if err != nil {
		t.Fatal(err)
	}
	wrong := "0.01"
	if cents[0] == 1 || cents[1] == 1 {
		wrong = "0.02"
	}
	for i, c := range []struct {
		left  int
		state hostedlink.State
	}{{2, hostedlink.Pending}, {1, hostedlink.Pending}, {0, hostedlink.Failed}} {
		merchants.owners.Store(0)
		sources.gets.Store(0)
		p, err := links.Verify(ctx, acme.link, wrong, wrong, nil)
		if e, ok := errs.As(err); !ok || e.Code != errs.VerificationFailed || e.Details["attempts_remaining"] != c.left {
			t.Fatalf("guess %d: %v, want verification_failed with %d attempts left", i+1, err, c.left)
		}
		if got := merchants.owners.Load(); got != 1 {
			t.Errorf("guess %d: %d link owner lookups, want 1", i+1, got)
		}
		if got := sources.gets.Load(); got != 1 {
			t.Errorf("guess %d: %d source reads, want 1", i+1, got)
		}
		v := p.Source.Verification
		if p.State != c.state || p.Source.ID != acme.link.SourceID || v == nil || v.AttemptsRemaining != c.left {
			t.Fatalf("guess %d: page in state %s with verification %+v, want %s with %d attempts left", i+1, p.State, v, c.state, c.left)
		}
		stored, err := svc.Funding.Get(ctx, acme.scope, acme.link.SourceID)
		if err != nil {
			t.Fatal(err)
		}
		if w := stored.Verification; w.Status != v.Status || w.AttemptsRemaining != v.AttemptsRemaining || w.Seq != v.Seq || !w.ExpiresAt.Equal(v.ExpiresAt) {
			t.Errorf("guess %d: page shows %+v, stored %+v", i+1, *v, *w)
		}
	}
}
