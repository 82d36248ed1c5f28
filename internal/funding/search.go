package funding

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Listed is a source as the dashboard lists it: with its customer's name
// and email.
type Listed struct {
	Source
	CustomerName  string
	CustomerEmail string
	// CustomerTestClock is the sandbox test clock the customer lives on;
	// "" for the wall clock.
	CustomerTestClock string
}

// Status filters of Search.
const (
	FilterLive       = ""           // every source not removed
	FilterUnverified = "unverified" // not removed, Unverified (a verification may be pending)
	FilterPending    = "pending"    // not removed, Unverified, micro-deposits pending
	FilterVerified   = "verified"   // not removed, Verified
	FilterRemoved    = "removed"    // removed
)

// Filters lists the status filters in the order a merchant picks them.
var Filters = []string{FilterLive, FilterUnverified, FilterPending, FilterVerified, FilterRemoved}

// Filter narrows a search of sources.
type Filter struct {
	// Search matches a source id, a user_id or last four digits exactly,
	// or a part of the customer's email or name or the nickname; "" all.
	Search string
	Status string // one of Filters
}

// MaxSearchLen bounds a search text.
const MaxSearchLen = 100

// Search returns a page of the scope's sources across customers, newest
// first, with whether more follow.
func (s *Service) Search(ctx context.Context, scope tenant.Scope, f Filter, p paging.Page) ([]Listed, bool, error) {
	f.Search = strings.TrimSpace(f.Search)
	if len(f.Search) > MaxSearchLen {
		return nil, false, errs.Invalid("q", "Search text must be at most 100 characters.")
	}
	if !slices.Contains(Filters, f.Status) {
		return nil, false, errs.Invalid("status", "status must be unverified, pending, verified or removed.")
	}
	list, err := s.store.SearchSources(ctx, scope, f, p)
	for i := 0; i < len(list) && err == nil; i++ {
		list[i].Source, err = s.current(ctx, list[i].Source)
	}
	return paging.Result(list, err, p)
}

// Label is what names a source to people in a list of its payments or
// events: its customer, bank and last four digits, and the customer's
// sanctions screening status.
type Label struct {
	SourceID, CustomerID, CustomerName string
	BankName                           string // "" when the routing directory names none
	AccountType, LastFour              string
	Screening                          string // the customer's sanctions screening status
	TestClock                          string // the customer's sandbox test clock; "" for the wall clock
}

// maxLabels bounds one call of Labels: a page of a list.
const maxLabels = 200

// Labels returns the labels of the scope's sources among ids by source
// id, in one read; ids of other scopes or unknown ones have none.
func (s *Service) Labels(ctx context.Context, scope tenant.Scope, ids []string) (map[string]Label, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) > maxLabels {
		ids = ids[:maxLabels]
	}
	out := make(map[string]Label, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	list, err := s.store.SourceLabels(ctx, scope, ids)
	if err != nil {
		return nil, fmt.Errorf("read the labels of %d sources: %w", len(ids), err)
	}
	for _, l := range list {
		out[l.SourceID] = l
	}
	return out, nil
}
