// Package evidence gathers what a merchant shows its bank when a customer
// disputes a debit (an unauthorized-return claim, R10): the payment, the
// mandate that authorized it as the customer accepted it, what the service
// knows of the account it was drawn on (how and when it was verified, its
// account check and ownership match, never its number), and the security
// log's events about the payment, its mandate and its source (a revoked
// mandate, a lifted block).
//
// It owns no rule and no table: each fact comes from the domain that keeps
// it (payment, funding, customer, audit), read through the small
// interfaces below, so the API and the dashboard's printable page show the
// same facts from one place. The reads are not one snapshot; evidence is
// read long after the debit, when nothing it shows still changes but a
// new revocation or unblock, which the next read shows.
package evidence

import (
	"context"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

// Evidence is a payment's evidence (GET /v2/payments/{id}/evidence).
type Evidence struct {
	Payment       payment.Payment `json:"payment"`
	Mandate       *Mandate        `json:"mandate"` // null for a credit, which needs no authorization
	FundingSource Source          `json:"funding_source"`
	AuditEvents   []audit.Event   `json:"audit_events"` // oldest first
}

// Mandate is the authorization of a debit as the customer accepted it.
type Mandate struct {
	ID         string              `json:"mandate_id"`
	Type       payment.MandateType `json:"type"`
	Text       string              `json:"text"`
	TextSHA256 string              `json:"text_sha256"` // hex SHA-256 of Text's UTF-8 bytes
	AcceptedAt time.Time           `json:"accepted_at"` // UTC
	IPAddress  *string             `json:"ip_address"`  // null for the sandbox's own mandates
	UserAgent  *string             `json:"user_agent"`
	// Status, RevokedAt and RevokeReason say whether it still stands: a
	// return's revocation is no audit event, so the mandate says it.
	Status       string     `json:"status"`
	RevokedAt    *time.Time `json:"revoked_at"`
	RevokeReason *string    `json:"revoke_reason"`
}

// Source is what the service knows of the account a payment used, masked.
type Source struct {
	ID                string                `json:"funding_source_id"`
	AccountHolderType string                `json:"account_holder_type"` // individual or company
	LastFour          string                `json:"last_four"`
	Verification      funding.VerifiedBy    `json:"verification"`
	AccountCheck      *funding.AccountCheck `json:"account_check"`
	Ownership         *funding.Ownership    `json:"ownership"` // null but for processor-token links

	// For people (the printable page): the bank, the account type and the
	// customer's name.
	BankName    *string `json:"-"`
	AccountType string  `json:"-"`
	HolderName  string  `json:"-"`
}

// Payments reads payments and mandates (payment.Service).
type Payments interface {
	Get(ctx context.Context, scope tenant.Scope, id string) (payment.Payment, error)
	GetMandate(ctx context.Context, scope tenant.Scope, id string) (payment.Mandate, error)
}

// Sources reads funding sources (funding.Service).
type Sources interface {
	Get(ctx context.Context, scope tenant.Scope, id string) (funding.Source, error)
	VerifiedBy(ctx context.Context, src funding.Source) (funding.VerifiedBy, error)
}

// Customers reads customers (customer.Service).
type Customers interface {
	Get(ctx context.Context, scope tenant.Scope, id string) (customer.Customer, error)
}

// AuditLog finds the security log's events about objects (audit.Service).
type AuditLog interface {
	About(ctx context.Context, scope tenant.Scope, refs audit.Refs) ([]audit.Event, error)
}

// Service gathers evidence.
type Service struct {
	payments  Payments
	sources   Sources
	customers Customers
	audit     AuditLog
}

// NewService returns a Service.
func NewService(p Payments, s Sources, c Customers, a AuditLog) *Service {
	return &Service{payments: p, sources: s, customers: c, audit: a}
}

// Of returns the evidence of scope's payment id; the payment's not_found
// when scope has no such payment (another merchant's or environment's).
func (s *Service) Of(ctx context.Context, scope tenant.Scope, id string) (Evidence, error) {
	p, err := s.payments.Get(ctx, scope, id)
	if err != nil {
		return Evidence{}, err
	}
	ev := Evidence{Payment: p}
	refs := audit.Refs{PaymentID: p.ID, SourceID: p.SourceID}
	if p.Direction == payment.Debit && p.MandateID != nil {
		m, err := s.payments.GetMandate(ctx, scope, *p.MandateID)
		if err != nil {
			return Evidence{}, err
		}
		ev.Mandate = &Mandate{ID: m.ID, Type: m.Type, Text: m.Text, TextSHA256: m.TextSHA256, AcceptedAt: m.AcceptedAt.UTC(),
			IPAddress: m.IPAddress, UserAgent: m.UserAgent, Status: m.Status, RevokedAt: m.RevokedAt, RevokeReason: m.RevokeReason}
		refs.MandateID = m.ID
	}
	if ev.FundingSource, err = s.source(ctx, scope, p); err != nil {
		return Evidence{}, err
	}
	if ev.AuditEvents, err = s.audit.About(ctx, scope, refs); err != nil {
		return Evidence{}, err
	}
	return ev, nil
}

// source is the masked account of p's funding source.
func (s *Service) source(ctx context.Context, scope tenant.Scope, p payment.Payment) (Source, error) {
	src, err := s.sources.Get(ctx, scope, p.SourceID)
	if err != nil {
		return Source{}, err
	}
	by, err := s.sources.VerifiedBy(ctx, src)
	if err != nil {
		return Source{}, err
	}
	c, err := s.customers.Get(ctx, scope, src.CustomerID)
	if err != nil {
		return Source{}, err
	}
	out := Source{ID: src.ID, AccountHolderType: accountHolderType(src, c), LastFour: src.LastFour, Verification: by,
		AccountCheck: src.AccountCheck, Ownership: src.Ownership, BankName: src.BankName, AccountType: src.AccountType,
		HolderName: strings.TrimSpace(c.FirstName + " " + c.LastName)}
	if out.AccountHolderType == "company" && c.BusinessName != nil {
		out.HolderName = strings.TrimSpace(*c.BusinessName)
	}
	return out, nil
}

// accountHolderType is whose account a source is: its own
// account_holder_type, or for a source read without one the default that
// field takes ("company" when its customer has a business name).
func accountHolderType(src funding.Source, c customer.Customer) string {
	if src.AccountHolderType != "" {
		return src.AccountHolderType
	}
	if c.BusinessName != nil && strings.TrimSpace(*c.BusinessName) != "" {
		return "company"
	}
	return "individual"
}
