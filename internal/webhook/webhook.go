// Package webhook delivers events to merchants: the one endpoint per key,
// its signing secrets, the events API, and the Dispatcher that sends each
// event signed with Standard Webhooks, at least once, with retries.
//
// It is the last leg of the outbox (see package event for the whole
// path): a use case records its event in its own transaction, that writes
// the delivery row and notifies, and the Dispatcher claims the delivery
// (Store.ClaimDelivery), signs it (Sign), sends it (Dispatcher.send,
// through the client of NewClient that refuses private addresses), and
// records the attempt and the next state (Store.FinishDelivery).
//
// Deliveries are leased, not held in open transactions. The Dispatcher
// works in three steps, and none holds a transaction or a database
// connection while a receiver thinks:
//
//  1. Claim (one statement, committed at once without waiting for the
//     disk: a lost lease is a process that died): the oldest due delivery of
//     each endpoint, skipping endpoints this process has at
//     WEBHOOK_PER_ENDPOINT, disabled endpoints, and backing-off endpoints
//     with a delivery in flight. Rows are locked with FOR UPDATE SKIP
//     LOCKED, so two processes never take the same one, and leased: a
//     random token, and next_attempt_at moved to the lease's end
//     (WEBHOOK_TIMEOUT + 5 s).
//  2. Send from a goroutine: sign, POST, read at most 1 KiB of the answer.
//     A hanging receiver costs one of the process's WEBHOOK_INFLIGHT
//     goroutines and nothing else, so one merchant's dead endpoint never
//     delays another merchant's events.
//  3. Record the attempt, the next state and the endpoint's health, only if
//     the row still carries this lease's token. A process that dies
//     mid-send leaves the delivery due again when the lease ends and
//     another process sends it (at least once: receivers dedupe on the
//     event id); a late record from a process that was only slow finds the
//     token changed and is dropped. The record is a durable commit: a
//     success gives its endpoint's WEBHOOK_PER_ENDPOINT place back when
//     the endpoint has answered, before it (its process place is kept
//     until the record is written), so an endpoint's rate is not bounded
//     by the disk's; a failure keeps its place until its streak is
//     recorded, which the next claim's backoff reads.
//
// Fairness comes from the claim's per-endpoint pick: a backlog on one
// endpoint leaves another endpoint's first event waiting for one claim
// round. A claim round runs on a wake-up, on the poll, and when a finished
// delivery may have let through one that a limit held back (the process or
// the endpoint was at its limit, the attempt failed, or the endpoint was
// backing off); a claim that comes back short took everything else that
// was due.
//
// Endpoint health: three failed attempts in a row make an endpoint
// backing_off (one delivery at a time across all processes until one
// succeeds); failing every attempt for WEBHOOK_DISABLE_AFTER disables it
// and records webhook.disabled. Nothing is dropped while it is disabled:
// enabling it delivers what it held, oldest first.
//
// Signing secrets are sealed with the account-number keyring (associated
// data: merchant and environment), because signing needs them in clear.
//
// SSRF: registration checks the URL, and the delivery client's dialer
// checks every address it connects to (net.Dialer.Control, after DNS), with
// no proxy and no redirects. The registration check alone would fall to DNS
// rebinding; the dial-time check alone would accept URLs that can never
// work. The development flag allows private addresses in both, and never
// lifts the https rule of production keys.
package webhook

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// DeliveryPrefix starts delivery ids.
const DeliveryPrefix = "whd_"

// SecretOverlap is how long a rolled secret keeps signing beside the new one.
const SecretOverlap = 24 * time.Hour

// Retention is how long events (with their deliveries) are kept.
const Retention = 30 * 24 * time.Hour

// Sealed is a secret encrypted by the Vault and the id of its key.
type Sealed struct {
	KeyID string
	Data  []byte
}

// Endpoint is the webhook of one merchant and environment.
type Endpoint struct {
	Scope             tenant.Scope
	URL               string
	Secret            Sealed
	Previous          *Sealed    // the secret before the last roll, while it still signs
	PreviousExpiresAt *time.Time // UTC; set exactly when Previous is
	CreatedAt         time.Time  // UTC
	UpdatedAt         time.Time  // UTC
	// Health: failed attempts in a row, since when the endpoint has failed
	// without a success (nil while it succeeds), and when it was disabled.
	ConsecutiveFailures int
	FailingSince        *time.Time // UTC
	DisabledAt          *time.Time // UTC; nil while enabled
}

// Endpoint statuses (Registration.Status).
const (
	StatusEnabled    = "enabled"
	StatusBackingOff = "backing_off" // one delivery in flight at a time until one succeeds
	StatusDisabled   = "disabled"    // no attempts; deliveries are kept for Enable
)

// BackoffAfter is how many failed attempts in a row put an endpoint in
// backing_off.
const BackoffAfter = 3

// Status is the endpoint's health for people.
func (ep Endpoint) Status() string {
	switch {
	case ep.DisabledAt != nil:
		return StatusDisabled
	case ep.ConsecutiveFailures >= BackoffAfter:
		return StatusBackingOff
	}
	return StatusEnabled
}

// Registration is the API view of an endpoint.
type Registration struct {
	WebhookURL              string     `json:"webhook_url"`
	Secret                  string     `json:"secret"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
	Status                  string     `json:"status"` // enabled, backing_off or disabled
	ConsecutiveFailures     int        `json:"consecutive_failures"`
	DisabledAt              *time.Time `json:"disabled_at"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
}

// Delivery statuses as stored.
const (
	Pending   = "pending"
	Delivered = "delivered"
	Failed    = "failed"
	Canceled  = "canceled"
)

// Delivery is the job of getting one event to the endpoint.
type Delivery struct {
	ID            string
	Scope         tenant.Scope
	EventID       string
	Status        string // Pending, Delivered, Failed or Canceled
	Attempts      int
	NextAttemptAt *time.Time // UTC; set exactly while Pending
	LastError     *string
	CreatedAt     time.Time // UTC
	UpdatedAt     time.Time // UTC
	Log           []Attempt // oldest first; filled by Store.Deliveries
}

// Attempt is one HTTP POST of a delivery.
type Attempt struct {
	AttemptedAt  time.Time `json:"attempted_at"` // UTC
	URL          string    `json:"url"`
	StatusCode   *int      `json:"status_code"`   // nil when no response came
	LatencyMS    int       `json:"latency_ms"`    // milliseconds until the response headers or the error
	ResponseBody string    `json:"response_body"` // at most the first KiB, valid UTF-8
	Error        *string   `json:"error"`
}

// Claim is a delivery leased to a dispatcher with what it needs to send it.
type Claim struct {
	Delivery   Delivery
	Event      event.Event // Data is the stored JSON
	Endpoint   Endpoint
	LeaseToken string // FinishDelivery must present it
}

// ClaimRequest says which due deliveries a dispatcher leases.
type ClaimRequest struct {
	Now         time.Time
	Limit       int            // at most this many in all
	PerEndpoint int            // at most this many in flight per endpoint in this process (1 when 0)
	InFlight    map[string]int // what this process has in flight, by endpoint key (merchant/environment)
	LeaseUntil  time.Time      // when the leases end if not finished
	Token       string         // the leases' token
}

// Store is the persistence the webhook service and dispatcher need.
type Store interface {
	// WithTx runs fn in one transaction, on the store bound to it; on a
	// store that is a transaction's already, under a savepoint of it.
	WithTx(ctx context.Context, fn func(tx Store) error) error
	event.Recorder
	audit.Recorder

	// UpsertEndpoint stores ep, or when the scope has an endpoint already
	// changes only its URL and updated_at; it returns the stored endpoint.
	UpsertEndpoint(ctx context.Context, ep Endpoint) (Endpoint, error)
	// Endpoint returns the scope's endpoint; errs.NotFound if none.
	// EndpointForUpdate also locks it until the transaction ends.
	Endpoint(ctx context.Context, scope tenant.Scope) (Endpoint, error)
	EndpointForUpdate(ctx context.Context, scope tenant.Scope) (Endpoint, error)
	UpdateSecrets(ctx context.Context, ep Endpoint) error
	// DeleteEndpoint removes the endpoint and cancels its pending
	// deliveries; errs.NotFound if there is none.
	DeleteEndpoint(ctx context.Context, scope tenant.Scope, at time.Time) error

	// RecordEventForEndpoint records e with its delivery, due at once, and
	// returns the delivery; errs.NotFound, with nothing written, when the
	// scope has no endpoint.
	RecordEventForEndpoint(ctx context.Context, e event.Event) (Delivery, error)

	// Event returns one event; errs.NotFound if unknown.
	Event(ctx context.Context, scope tenant.Scope, id string) (event.Event, error)
	// ListEvents returns up to p.Limit+1 events newest first, of the type
	// (all when "") or whose type starts with prefix (all when "").
	ListEvents(ctx context.Context, scope tenant.Scope, typ, prefix string, p paging.Page) ([]event.Event, error)
	// DeliveryLog returns up to p.Limit+1 events newest first, each with
	// its latest delivery and that delivery's latest attempt.
	DeliveryLog(ctx context.Context, scope tenant.Scope, p paging.Page) ([]LogEntry, error)
	// SourceEvents returns up to limit events about a funding source, newest first.
	SourceEvents(ctx context.Context, scope tenant.Scope, sourceID string, limit int) ([]event.Event, error)
	// Deliveries returns an event's deliveries, oldest first, with their attempts.
	Deliveries(ctx context.Context, scope tenant.Scope, eventID string) ([]Delivery, error)
	// QueueDelivery makes the event's pending delivery due at now, or when
	// none is pending adds a new delivery with id, due at now.
	QueueDelivery(ctx context.Context, scope tenant.Scope, eventID, id string, now time.Time) error
	// ClaimDeliveries leases up to r.Limit due deliveries round-robin
	// across endpoints (every endpoint's oldest before anyone's second),
	// within each endpoint's room under r.PerEndpoint, skipping disabled
	// endpoints, backing-off endpoints that have a delivery in flight, and
	// rows other processes are claiming; it commits before it returns.
	ClaimDeliveries(ctx context.Context, r ClaimRequest) ([]Claim, error)
	// EndpointFailed counts a failed attempt; when the streak has lasted
	// disableAfter it disables the endpoint and reports so (once).
	EndpointFailed(ctx context.Context, scope tenant.Scope, now time.Time, disableAfter time.Duration) (disabled bool, err error)
	// EnableEndpoint enables the endpoint again with a clean record and
	// makes every held delivery due, oldest first; errs.NotFound if none.
	EnableEndpoint(ctx context.Context, scope tenant.Scope, now time.Time) error
	// RecordUndeliveredEvent writes an event that queues no delivery.
	RecordUndeliveredEvent(ctx context.Context, e event.Event) error
	// FinishDelivery stores a delivery's new state and the attempt that led
	// to it, if the lease of token still holds it; errs.Conflict when not
	// (the lease ran out and another process took the delivery over). A
	// delivered one also clears its endpoint's failure streak.
	FinishDelivery(ctx context.Context, d Delivery, a Attempt, token string) error
	// DeleteEventsBefore deletes up to limit events created before t, with
	// their deliveries and attempts, and returns how many it deleted.
	DeleteEventsBefore(ctx context.Context, t time.Time, limit int) (int64, error)
}

// Vault seals and opens signing secrets (vault.Vault).
type Vault interface {
	Seal(plaintext, aad []byte) (keyID string, sealed []byte)
	Open(keyID string, sealed, aad []byte) ([]byte, error)
}

// Service registers endpoints and answers the events API.
type Service struct {
	store  Store
	vault  Vault
	now    func() time.Time
	policy URLPolicy
}

// On returns the service on tx, a store bound to a caller's transaction:
// its use cases write in that transaction, each under a savepoint of it.
func (s *Service) On(tx Store) *Service {
	c := *s
	c.store = tx
	return &c
}

// NewService returns a Service.
func NewService(store Store, vault Vault, now func() time.Time, policy URLPolicy) *Service {
	return &Service{store: store, vault: vault, now: now, policy: policy}
}

// NotFound is the webhook_not_found error.
func NotFound() error {
	return errs.New(errs.WebhookNotFound, "No webhook URL is registered for this API key; register one with POST /v2/webhooks.")
}

func eventNotFound() error {
	return &errs.Error{Code: errs.EventNotFound, Message: "No event with this id exists.", Param: "id"}
}

func secretAAD(scope tenant.Scope) []byte {
	return []byte("webhook-secret:" + scope.MerchantID + ":" + string(scope.Env))
}

func (s *Service) seal(scope tenant.Scope, secret string) Sealed {
	id, data := s.vault.Seal([]byte(secret), secretAAD(scope))
	return Sealed{KeyID: id, Data: data}
}

// secrets returns the endpoint's secrets that sign at now: the current one,
// then the previous one during its overlap.
func secrets(v Vault, ep Endpoint, now time.Time) ([]string, error) {
	cur, err := v.Open(ep.Secret.KeyID, ep.Secret.Data, secretAAD(ep.Scope))
	if err != nil {
		return nil, fmt.Errorf("open the signing secret of merchant %s: %w", ep.Scope.MerchantID, err)
	}
	out := []string{string(cur)}
	if ep.Previous != nil && ep.PreviousExpiresAt != nil && now.Before(*ep.PreviousExpiresAt) {
		prev, err := v.Open(ep.Previous.KeyID, ep.Previous.Data, secretAAD(ep.Scope))
		if err != nil {
			return nil, fmt.Errorf("open the previous signing secret of merchant %s: %w", ep.Scope.MerchantID, err)
		}
		out = append(out, string(prev))
	}
	return out, nil
}

func (s *Service) view(ep Endpoint) (Registration, error) {
	now := s.now()
	sec, err := secrets(s.vault, ep, now)
	if err != nil {
		return Registration{}, err
	}
	r := Registration{WebhookURL: ep.URL, Secret: sec[0], CreatedAt: ep.CreatedAt, UpdatedAt: ep.UpdatedAt,
		Status: ep.Status(), ConsecutiveFailures: ep.ConsecutiveFailures, DisabledAt: ep.DisabledAt}
	if len(sec) > 1 {
		r.PreviousSecretExpiresAt = ep.PreviousExpiresAt
	}
	return r, nil
}

// Register sets the scope's webhook URL. The first registration creates the
// signing secret; a later one replaces the URL and keeps the secret.
// Pending deliveries go to the new URL from their next attempt on.
func (s *Service) Register(ctx context.Context, scope tenant.Scope, rawURL string, by audit.Actor) (Registration, error) {
	u, err := s.policy.Check(ctx, scope.Env, rawURL)
	if err != nil {
		return Registration{}, err
	}
	now := s.now().UTC()
	var ep Endpoint
	err = s.store.WithTx(ctx, func(tx Store) error {
		var err error
		ep, err = tx.UpsertEndpoint(ctx, Endpoint{
			Scope: scope, URL: u, Secret: s.seal(scope, NewSecret()), CreatedAt: now, UpdatedAt: now,
		})
		if err != nil {
			return fmt.Errorf("store the endpoint of merchant %s: %w", scope.MerchantID, err)
		}
		return tx.RecordAudit(ctx, audit.In(scope, audit.WebhookURLSet, by, map[string]string{"url_host": urlHost(u)}))
	})
	if err != nil {
		return Registration{}, err
	}
	return s.view(ep)
}

// urlHost is what the audit log keeps of a webhook URL: its scheme and
// host, never a path or query that may carry a token.
func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Get returns the scope's webhook registration, or webhook_not_found.
func (s *Service) Get(ctx context.Context, scope tenant.Scope) (Registration, error) {
	ep, err := endpoint(ctx, scope, s.store.Endpoint)
	if err != nil {
		return Registration{}, err
	}
	return s.view(ep)
}

// endpoint is the scope's endpoint from get (Store.Endpoint or
// Store.EndpointForUpdate), or webhook_not_found.
func endpoint(ctx context.Context, scope tenant.Scope, get func(context.Context, tenant.Scope) (Endpoint, error)) (Endpoint, error) {
	ep, err := get(ctx, scope)
	if errs.Is(err, errs.NotFound) {
		return Endpoint{}, NotFound()
	}
	return ep, err
}

// Delete removes the scope's webhook and cancels its pending deliveries.
func (s *Service) Delete(ctx context.Context, scope tenant.Scope, by audit.Actor) error {
	err := s.store.WithTx(ctx, func(tx Store) error {
		// Read, not locked: DeleteEndpoint locks the deliveries before the
		// endpoint, as the dispatcher does, and locking the endpoint first
		// would deadlock against a delivery in flight.
		ep, err := tx.Endpoint(ctx, scope)
		if err != nil {
			return fmt.Errorf("load the endpoint of merchant %s: %w", scope.MerchantID, err)
		}
		if err := tx.DeleteEndpoint(ctx, scope, s.now().UTC()); err != nil {
			return fmt.Errorf("delete the endpoint of merchant %s: %w", scope.MerchantID, err)
		}
		return tx.RecordAudit(ctx, audit.In(scope, audit.WebhookDeleted, by, map[string]string{"url_host": urlHost(ep.URL)}))
	})
	if errs.Is(err, errs.NotFound) {
		return NotFound()
	}
	return err
}

// Enable turns a disabled (or backing-off) endpoint back on with a clean
// record, and makes every delivery it held due now, oldest first: unlike
// services that drop what failed while an endpoint was down, nothing is
// lost.
func (s *Service) Enable(ctx context.Context, scope tenant.Scope, by audit.Actor) (Registration, error) {
	err := s.store.WithTx(ctx, func(tx Store) error {
		if err := tx.EnableEndpoint(ctx, scope, s.now().UTC()); err != nil {
			return fmt.Errorf("enable the endpoint of merchant %s: %w", scope.MerchantID, err)
		}
		return tx.RecordAudit(ctx, audit.In(scope, audit.WebhookEnabled, by, nil))
	})
	if errs.Is(err, errs.NotFound) {
		return Registration{}, NotFound()
	}
	if err != nil {
		return Registration{}, err
	}
	return s.Get(ctx, scope)
}

// RollSecret replaces the signing secret. The old one keeps signing beside
// the new one for SecretOverlap (a secret rolled before that is dropped).
func (s *Service) RollSecret(ctx context.Context, scope tenant.Scope, by audit.Actor) (Registration, error) {
	var out Registration
	err := s.store.WithTx(ctx, func(tx Store) error {
		ep, err := endpoint(ctx, scope, tx.EndpointForUpdate)
		if err != nil {
			return fmt.Errorf("lock the endpoint of merchant %s: %w", scope.MerchantID, err)
		}
		now := s.now().UTC()
		prev, until := ep.Secret, now.Add(SecretOverlap)
		ep.Previous, ep.PreviousExpiresAt = &prev, &until
		ep.Secret = s.seal(scope, NewSecret())
		ep.UpdatedAt = now
		if err := tx.UpdateSecrets(ctx, ep); err != nil {
			return fmt.Errorf("store the rolled secret of merchant %s: %w", scope.MerchantID, err)
		}
		if err := tx.RecordAudit(ctx, audit.In(scope, audit.WebhookSecretRolled, by, map[string]string{"previous_secret_expires_at": until.Format(time.RFC3339)})); err != nil {
			return fmt.Errorf("record the secret roll of merchant %s: %w", scope.MerchantID, err)
		}
		out, err = s.view(ep)
		return err
	})
	return out, err
}

// EventDetail is an event with its deliveries: the GET /v2/events/{id} resource.
type EventDetail struct {
	event.Event
	Deliveries []Delivery
}

// SendTest records a webhook.test event, which is delivered like any other,
// in one statement that also checks the endpoint, and answers with the event
// and its delivery as committed (pending, not yet tried).
func (s *Service) SendTest(ctx context.Context, scope tenant.Scope) (EventDetail, error) {
	e := event.New(scope, event.WebhookTest, map[string]string{
		"message": "This is a test event from fundsource. Its delivery is acknowledged when your endpoint answers 2xx; check the signature with your secret.",
	}, s.now())
	d, err := s.store.RecordEventForEndpoint(ctx, e)
	if errs.Is(err, errs.NotFound) {
		return EventDetail{}, NotFound()
	}
	if err != nil {
		return EventDetail{}, fmt.Errorf("record test event %s: %w", e.ID, err)
	}
	// The event as committed: its one delivery pending, not yet tried.
	return EventDetail{Event: e, Deliveries: []Delivery{d}}, nil
}

// Events lists events newest first; filter is "" (all), an event type, or
// a group such as "funding_source.*".
func (s *Service) Events(ctx context.Context, scope tenant.Scope, filter string, p paging.Page) ([]event.Event, bool, error) {
	var typ, prefix string
	switch {
	case filter == "":
	case !event.ValidFilter(filter):
		return nil, false, errs.Invalid("type", "type must be an event type such as funding_source.verified, or a group such as funding_source.*.")
	case filter[len(filter)-1] == '*':
		prefix = filter[:len(filter)-1]
	default:
		typ = filter
	}
	es, err := s.store.ListEvents(ctx, scope, typ, prefix, p)
	return paging.Result(es, err, p)
}

// Event returns one event with its deliveries, or event_not_found.
func (s *Service) Event(ctx context.Context, scope tenant.Scope, id string) (EventDetail, error) {
	e, err := s.store.Event(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return EventDetail{}, eventNotFound()
	}
	if err != nil {
		return EventDetail{}, fmt.Errorf("load event %s: %w", id, err)
	}
	ds, err := s.store.Deliveries(ctx, scope, id)
	if err != nil {
		return EventDetail{}, fmt.Errorf("list deliveries of event %s: %w", id, err)
	}
	return EventDetail{Event: e, Deliveries: ds}, nil
}

// Redeliver sends an event again to the current webhook URL: its pending
// delivery becomes due now, or a new delivery starts a fresh retry schedule.
func (s *Service) Redeliver(ctx context.Context, scope tenant.Scope, id string) (EventDetail, error) {
	err := s.store.WithTx(ctx, func(tx Store) error {
		if _, err := tx.Event(ctx, scope, id); errs.Is(err, errs.NotFound) {
			return eventNotFound()
		} else if err != nil {
			return fmt.Errorf("load event %s: %w", id, err)
		}
		if _, err := endpoint(ctx, scope, tx.Endpoint); err != nil {
			return fmt.Errorf("load the endpoint of merchant %s: %w", scope.MerchantID, err)
		}
		return tx.QueueDelivery(ctx, scope, id, ids.New(DeliveryPrefix), s.now().UTC())
	})
	if err != nil {
		return EventDetail{}, err
	}
	return s.Event(ctx, scope, id)
}

// PurgeEvents deletes events older than Retention, in batches, and returns
// how many it deleted.
func (s *Service) PurgeEvents(ctx context.Context) (int64, error) {
	cutoff := s.now().Add(-Retention)
	var total int64
	for {
		n, err := s.store.DeleteEventsBefore(ctx, cutoff, 1000)
		total += n
		if err != nil || n < 1000 {
			return total, err
		}
	}
}
