// Package customer holds a merchant's customers (the spec's user_id).
package customer

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/person"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/core/testclock"
	"github.com/fundsource/fundsource/internal/sanctions"
)

// Customer is one customer of a merchant in one environment. The JSON form is
// the API resource and the customer.created event data.
type Customer struct {
	Scope        tenant.Scope `json:"-"`
	ID           string       `json:"user_id"`
	FirstName    string       `json:"first_name"`
	LastName     string       `json:"last_name"`
	Email        string       `json:"email"`
	BusinessName *string      `json:"business_name"`
	// Screening is the sanctions screening of its names (screening.go).
	Screening sanctions.Screening `json:"screening"`
	// Metadata is the merchant's own (metadata package).
	Metadata  metadata.Metadata `json:"metadata"`
	CreatedAt time.Time         `json:"created_at"` // UTC; on a test clock, the clock's time
	// TestClock is the sandbox test clock the customer lives on (clk_…);
	// "" (absent from the JSON) for the wall clock.
	TestClock string `json:"test_clock,omitempty"`
}

// Input is what a merchant sends to create a customer.
type Input struct {
	FirstName    string  `json:"first_name"`
	LastName     string  `json:"last_name"`
	Email        string  `json:"email"`
	BusinessName *string `json:"business_name"`
	// Metadata is the merchant's own (metadata package).
	Metadata metadata.Metadata `json:"metadata"`
	// TestClock puts the customer on a sandbox test clock (clk_…); the
	// request runs on that clock (its context carries it).
	TestClock *string `json:"test_clock"`
}

// Update is a partial change of a customer: only the fields given change.
// An empty business_name removes it.
type Update struct {
	FirstName    *string `json:"first_name"`
	LastName     *string `json:"last_name"`
	Email        *string `json:"email"`
	BusinessName *string `json:"business_name"`
	// Metadata is merged into the customer's: a key set to "" is removed.
	Metadata metadata.Metadata `json:"metadata"`
}

// Store is the persistence the customer service needs.
type Store interface {
	// CustomerForUpdate is Customer with the row locked until the
	// transaction ends.
	CustomerForUpdate(ctx context.Context, scope tenant.Scope, id string) (Customer, error)
	UpdateCustomer(ctx context.Context, c Customer) error
	// WithTx runs fn in one transaction, on the store bound to it; on a
	// store that is a transaction's already, under a savepoint of it.
	WithTx(ctx context.Context, fn func(tx Store) error) error
	// InsertCustomer stores a new customer. One on a test clock is
	// stored only when the clock is the scope's, ready and carrying fewer
	// than MaxPerClock customers, decided in the insert's statement under
	// the clock's row lock; else ErrNoClock, ErrClockAdvancing or
	// ErrClockFull, with nothing written.
	InsertCustomer(ctx context.Context, c Customer) error
	// Customer returns errs.NotFound for an id unknown in the scope.
	Customer(ctx context.Context, scope tenant.Scope, id string) (Customer, error)
	// ListCustomers returns up to p.Limit+1 customers, newest first, all
	// or those matching search (see Search); errs.NotFound when
	// p.StartingAfter is unknown.
	ListCustomers(ctx context.Context, scope tenant.Scope, search string, p paging.Page) ([]Customer, error)
	// CustomersOnClocks returns up to perClock customers of each of the
	// scope's test clocks named, newest first, and how many each carries.
	CustomersOnClocks(ctx context.Context, scope tenant.Scope, clocks []string, perClock int) ([]Customer, map[string]int, error)
	event.Recorder
}

// Service applies the customer rules.
type Service struct {
	store Store
	now   func(context.Context) time.Time
	// sanctions screens names as they are written; nil: every customer
	// is clear.
	sanctions *sanctions.List
}

// On returns the service on tx, a store bound to a caller's transaction:
// its use cases write in that transaction, each under a savepoint of it.
func (s *Service) On(tx Store) *Service {
	c := *s
	c.store = tx
	return &c
}

// NewService returns a Service.
func NewService(store Store, now func() time.Time) *Service {
	return &Service{store: store, now: testclock.Scope(now)}
}

// Create validates in and stores a new customer with its customer.created event.
func (s *Service) Create(ctx context.Context, scope tenant.Scope, in Input) (Customer, error) {
	c, err := validate(in)
	if err != nil {
		return Customer{}, err
	}
	if c.Metadata, err = metadata.New(in.Metadata); err != nil {
		return Customer{}, err
	}
	c.Scope = scope
	c.ID = ids.New(ids.Customer)
	c.CreatedAt = s.now(ctx).UTC()
	if in.TestClock != nil {
		if c, err = onClock(ctx, scope, c, *in.TestClock); err != nil {
			return Customer{}, err
		}
	}
	c.Screening = s.screen(sanctions.Screening{}, c)
	err = s.store.WithTx(ctx, func(tx Store) error {
		if err := tx.InsertCustomer(ctx, c); err != nil {
			if refused := clockRefusal(err); refused != err {
				return refused
			}
			return fmt.Errorf("insert customer %s: %w", c.ID, err)
		}
		if err := tx.RecordEvent(ctx, event.New(scope, event.CustomerCreated, c, c.CreatedAt)); err != nil {
			return fmt.Errorf("record customer.created of %s: %w", c.ID, err)
		}
		return s.matched(ctx, tx, sanctions.Screening{}, c)
	})
	if err != nil {
		return Customer{}, err
	}
	return c, nil
}

// Update changes the fields u gives (under the creation's rules) and
// records customer.updated when anything changed.
func (s *Service) Update(ctx context.Context, scope tenant.Scope, id string, u Update) (Customer, error) {
	if u.FirstName == nil && u.LastName == nil && u.Email == nil && u.BusinessName == nil && u.Metadata == nil {
		return Customer{}, errs.Invalid("first_name", "Send at least one of first_name, last_name, email, business_name and metadata.")
	}
	var out Customer
	err := s.store.WithTx(ctx, func(tx Store) error {
		c, err := tx.CustomerForUpdate(ctx, scope, id)
		if errs.Is(err, errs.NotFound) {
			return NotFound()
		}
		if err != nil {
			return fmt.Errorf("lock customer %s: %w", id, err)
		}
		in := Input{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, BusinessName: c.BusinessName}
		in.FirstName = *cmp.Or(u.FirstName, &in.FirstName)
		in.LastName = *cmp.Or(u.LastName, &in.LastName)
		in.Email = *cmp.Or(u.Email, &in.Email)
		if u.BusinessName != nil {
			in.BusinessName = u.BusinessName
		}
		next, err := validate(in)
		if err != nil {
			return err
		}
		if next.Metadata, err = metadata.Apply(c.Metadata, u.Metadata); err != nil {
			return err
		}
		next.Scope, next.ID, next.CreatedAt, next.Screening = c.Scope, c.ID, c.CreatedAt, c.Screening
		next.TestClock = c.TestClock
		out = next
		if next.FirstName == c.FirstName && next.LastName == c.LastName && next.Email == c.Email &&
			ptrEqual(next.BusinessName, c.BusinessName) && maps.Equal(next.Metadata, c.Metadata) {
			return nil // nothing changed: no write, no event
		}
		if next.FirstName != c.FirstName || next.LastName != c.LastName || !ptrEqual(next.BusinessName, c.BusinessName) {
			next.Screening = s.screen(c.Screening, next)
			out = next
		}
		if err := tx.UpdateCustomer(ctx, next); err != nil {
			return fmt.Errorf("update customer %s: %w", id, err)
		}
		if err := tx.RecordEvent(ctx, event.New(scope, event.CustomerUpdated, next, s.now(ctx).UTC())); err != nil {
			return fmt.Errorf("record customer.updated of %s: %w", id, err)
		}
		return s.matched(ctx, tx, c.Screening, next)
	})
	return out, err
}

func ptrEqual(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// Get returns one customer, or customer_not_found.
func (s *Service) Get(ctx context.Context, scope tenant.Scope, id string) (Customer, error) {
	c, err := s.store.Customer(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Customer{}, NotFound()
	}
	if err != nil {
		return Customer{}, fmt.Errorf("read customer %s: %w", id, err)
	}
	return c, nil
}

// List returns a page of customers, newest first, and whether more follow.
func (s *Service) List(ctx context.Context, scope tenant.Scope, p paging.Page) ([]Customer, bool, error) {
	return s.Search(ctx, scope, "", p)
}

// MaxSearchLen bounds a search text.
const MaxSearchLen = 100

// Search returns a page of the customers whose user_id is text or whose
// email or name contains it (any case), newest first; "" finds all.
func (s *Service) Search(ctx context.Context, scope tenant.Scope, text string, p paging.Page) ([]Customer, bool, error) {
	text = strings.TrimSpace(text)
	if len(text) > MaxSearchLen {
		return nil, false, errs.Invalid("q", "Search text must be at most 100 characters.")
	}
	cs, err := s.store.ListCustomers(ctx, scope, text, p)
	if err != nil {
		err = fmt.Errorf("list customers of merchant %s: %w", scope.MerchantID, err)
	}
	return paging.Result(cs, err, p)
}

// NotFound is the customer_not_found error.
func NotFound() error {
	return &errs.Error{Code: errs.CustomerNotFound, Message: "No customer with this user_id exists.", Param: "user_id"}
}

func validate(in Input) (Customer, error) {
	var c Customer
	var err error
	if c.FirstName, err = person.Name("first_name", in.FirstName, 100, person.Required); err != nil {
		return Customer{}, err
	}
	if c.LastName, err = person.Name("last_name", in.LastName, 100, person.Required); err != nil {
		return Customer{}, err
	}
	if c.Email, err = person.Email("email", in.Email); err != nil {
		return Customer{}, err
	}
	if in.BusinessName != nil {
		b, err := person.Name("business_name", *in.BusinessName, 200, person.Optional)
		if err != nil {
			return Customer{}, err
		}
		if b != "" {
			c.BusinessName = &b
		}
	}
	return c, nil
}
