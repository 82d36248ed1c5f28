package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
)

// Schedule is the wait before each retry: after the first failed attempt
// 5 s, after the second 5 min, and so on; after the last retry fails the
// delivery is marked failed. Each wait gets ±10 % jitter.
var Schedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
}

// Jitter is the largest fraction a retry wait is moved by, either way.
const Jitter = 0.1

// MaxResponseBody is how much of a response body an attempt keeps.
const MaxResponseBody = 1024

// Defaults of DispatcherOptions.
const (
	DefaultInFlight     = 256
	DefaultPerEndpoint  = 8
	DefaultTimeout      = 10 * time.Second
	DefaultDisableAfter = 72 * time.Hour
)

// leaseMargin is how much longer than an attempt's timeout a lease lasts:
// the time to record the attempt after the endpoint gave up.
const leaseMargin = 5 * time.Second

// claimBatch is the most deliveries one claim leases.
const claimBatch = 64

// DispatcherOptions tune a Dispatcher; zero values take the defaults.
type DispatcherOptions struct {
	InFlight     int           // deliveries this process sends or records at once; default DefaultInFlight
	PerEndpoint  int           // of those, waiting for one endpoint's answer (a failure: until recorded); default DefaultPerEndpoint
	Poll         time.Duration // how often to look for due deliveries without a notification; default 1 s
	Timeout      time.Duration // limit of one attempt; default DefaultTimeout, at most Timeout
	DisableAfter time.Duration // an endpoint failing this long is disabled; default DefaultDisableAfter
	Logger       *slog.Logger
}

// Dispatcher sends due deliveries. Every process of the service runs one.
// It leases deliveries instead of locking them: a claim is one short
// statement that leases due deliveries (FOR UPDATE SKIP LOCKED, so two
// processes never lease the same one), each is sent by its own goroutine
// with no transaction or connection held while the endpoint answers, and
// the attempt is recorded in a second short statement that must still hold
// the lease. A hanging endpoint costs goroutines, never connections, and
// when a process dies its leases run out and another process sends again.
type Dispatcher struct {
	store  Store
	vault  Vault
	client *http.Client
	now    func() time.Time
	opts   DispatcherOptions

	mu       sync.Mutex
	inFlight map[string]int // deliveries waiting for their endpoint, per endpoint key; guarded by mu
	total    int            // all deliveries being sent or recorded; guarded by mu
	peak     int            // the most ever at once; guarded by mu
	claims   int            // claim statements run; guarded by mu
}

// NewDispatcher returns a Dispatcher sending with client.
func NewDispatcher(store Store, vault Vault, client *http.Client, now func() time.Time, opts DispatcherOptions) *Dispatcher {
	if opts.InFlight <= 0 {
		opts.InFlight = DefaultInFlight
	}
	if opts.PerEndpoint <= 0 {
		opts.PerEndpoint = DefaultPerEndpoint
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	opts.Timeout = min(opts.Timeout, Timeout)
	if opts.DisableAfter <= 0 {
		opts.DisableAfter = DefaultDisableAfter
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Dispatcher{store: store, vault: vault, client: client, now: now, opts: opts, inFlight: map[string]int{}}
}

// Run delivers until ctx ends: it claims due deliveries when wake fires (a
// PostgreSQL notification), every Poll, and when a finished delivery may
// have let through one that a limit held back (see claimRounds), as long
// as it has room. When ctx ends it stops claiming and waits for the
// deliveries being sent (at most the timeout) to be recorded.
func (d *Dispatcher) Run(ctx context.Context, wake <-chan struct{}) {
	freed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	t := time.NewTicker(d.opts.Poll)
	defer t.Stop()
	for {
		d.claimRounds(ctx, &wg, freed)
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-wake:
		case <-freed:
		case <-t.C:
		}
	}
}

// claimRounds leases and starts deliveries until none is due or the
// process has no room left. A claim that came back short took everything
// due that the limits let through, so a finished delivery starts another
// round (through freed) only when it may have held one back: the process
// or its endpoint was at its limit, the attempt failed (its endpoint may
// now back off, one delivery at a time), or its endpoint was backing off
// when it was claimed (a success lets the endpoint's others go). New
// deliveries come with a notification, and retries fall due on the Poll.
func (d *Dispatcher) claimRounds(ctx context.Context, wg *sync.WaitGroup, freed chan<- struct{}) {
	for ctx.Err() == nil {
		room := d.room()
		if room == 0 {
			return
		}
		want := min(room, claimBatch)
		claims, again, err := d.claim(ctx, want)
		if err != nil {
			if ctx.Err() == nil {
				d.opts.Logger.Warn("webhook claim failed", slog.Any("error", err))
			}
			return
		}
		free := func() {
			select {
			case freed <- struct{}{}:
			default:
			}
		}
		for _, c := range claims {
			wg.Go(func() {
				key := endpointKey(c)
				backingOff := c.Endpoint.Status() == StatusBackingOff
				a := d.send(context.WithoutCancel(ctx), c)
				// A success to a healthy endpoint gives its place back as
				// soon as the endpoint has answered: the place bounds what
				// the endpoint is sent at once, and recording the attempt
				// is a commit that waits for the disk, during which the
				// endpoint could have had the next delivery. (A failure
				// keeps its place until its streak is recorded: the next
				// claim backs off by it.)
				early := succeeded(a) && !backingOff
				if early && d.leaveEndpoint(key) {
					free()
				}
				delivered, err := d.record(context.WithoutCancel(ctx), c, a)
				if err != nil {
					d.opts.Logger.Warn("webhook delivery not recorded", slog.String("delivery_id", c.Delivery.ID), slog.Any("error", err))
				}
				full := d.leaveProcess()
				if !early {
					full = d.leaveEndpoint(key) || full
				}
				if full || !delivered || backingOff {
					free()
				}
			})
		}
		if len(claims) < want && !again {
			// Everything due that this process has room for is on its way;
			// a finished delivery or a notification starts the next round.
			return
		}
	}
}

// claim leases up to n due deliveries, within each endpoint's room under
// PerEndpoint in this process, and counts them in flight (done counts each
// out). again reports that an endpoint whose room the claim filled has
// room once more: one of its deliveries finished while the claim ran, so
// the claim may have held one back that no later finish will ask for.
func (d *Dispatcher) claim(ctx context.Context, n int) (claims []Claim, again bool, err error) {
	d.mu.Lock()
	d.claims++
	counted := maps.Clone(d.inFlight)
	d.mu.Unlock()
	now := d.now().UTC()
	claims, err = d.store.ClaimDeliveries(ctx, ClaimRequest{Now: now, Limit: n, PerEndpoint: d.opts.PerEndpoint, InFlight: counted,
		LeaseUntil: now.Add(d.opts.Timeout + leaseMargin), Token: ids.New("lease_")})
	if err != nil {
		err = fmt.Errorf("claim %d webhook deliveries: %w", n, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range claims {
		k := endpointKey(c)
		d.inFlight[k]++
		d.total++
		counted[k]++ // now what the endpoint had, and what this claim added
	}
	d.peak = max(d.peak, d.total)
	for k, n := range counted {
		again = again || (n >= d.opts.PerEndpoint && d.inFlight[k] < d.opts.PerEndpoint)
	}
	return claims, again, err
}

// DeliverDue sends every delivery due now, one after another, and returns
// how many it sent. Tests drive the dispatcher with it and an injected clock.
func (d *Dispatcher) DeliverDue(ctx context.Context) (int, error) {
	n := 0
	for {
		claims, _, err := d.claim(ctx, 1)
		if err != nil || len(claims) == 0 {
			return n, err
		}
		_, err = d.deliver(ctx, claims[0])
		d.done(endpointKey(claims[0]))
		if err != nil {
			return n, err
		}
		n++
	}
}

// Peak is the most deliveries this dispatcher has had in flight at once.
func (d *Dispatcher) Peak() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.peak
}

// Claims is how many claim statements this dispatcher has run.
func (d *Dispatcher) Claims() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.claims
}

func endpointKey(c Claim) string {
	return c.Delivery.Scope.MerchantID + "/" + string(c.Delivery.Scope.Env)
}

// room is how many more deliveries this process may start.
func (d *Dispatcher) room() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return max(d.opts.InFlight-d.total, 0)
}

// done counts a finished delivery to the endpoint key out, and reports
// whether the process or the endpoint was at its limit until then.
func (d *Dispatcher) done(key string) (full bool) {
	endpoint := d.leaveEndpoint(key)
	return d.leaveProcess() || endpoint
}

// leaveEndpoint counts a delivery out of its endpoint's places, and
// reports whether the endpoint was at its limit until then.
func (d *Dispatcher) leaveEndpoint(key string) (full bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	full = d.inFlight[key] >= d.opts.PerEndpoint
	if d.inFlight[key]--; d.inFlight[key] <= 0 {
		delete(d.inFlight, key)
	}
	return full
}

// leaveProcess counts a recorded delivery out of the process's places,
// and reports whether the process was at its limit until then.
func (d *Dispatcher) leaveProcess() (full bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	full = d.total >= d.opts.InFlight
	d.total--
	return full
}

// deliver sends a leased delivery, then records the attempt and the next
// state: a success in one statement, which also clears the endpoint's
// failure streak; a failure in one short transaction with the endpoint's
// streak (and, when it disables the endpoint, its event). A lease that ran
// out (another process took the delivery over) drops this attempt. It
// reports whether the endpoint accepted the delivery.
func (d *Dispatcher) deliver(ctx context.Context, c Claim) (bool, error) {
	return d.record(ctx, c, d.send(ctx, c))
}

// record stores attempt a of the leased delivery c and its next state (see
// deliver).
func (d *Dispatcher) record(ctx context.Context, c Claim, a Attempt) (bool, error) {
	now := d.now().UTC()
	var err error
	if succeeded(a) {
		if err = d.store.FinishDelivery(ctx, next(c.Delivery, a, now), a, c.LeaseToken); err != nil {
			err = fmt.Errorf("finish delivery %s: %w", c.Delivery.ID, err)
		}
	} else {
		err = d.store.WithTx(ctx, func(tx Store) error {
			if err := tx.FinishDelivery(ctx, next(c.Delivery, a, now), a, c.LeaseToken); err != nil {
				return fmt.Errorf("finish delivery %s: %w", c.Delivery.ID, err)
			}
			disabled, err := tx.EndpointFailed(ctx, c.Delivery.Scope, now, d.opts.DisableAfter)
			if err != nil {
				return fmt.Errorf("count the failure of delivery %s against merchant %s's endpoint: %w", c.Delivery.ID, c.Delivery.Scope.MerchantID, err)
			}
			if !disabled {
				return nil
			}
			d.opts.Logger.Warn("webhook endpoint disabled after failing continuously",
				slog.String("merchant_id", c.Delivery.Scope.MerchantID), slog.String("environment", string(c.Delivery.Scope.Env)))
			if err := tx.RecordUndeliveredEvent(ctx, event.New(c.Delivery.Scope, event.WebhookDisabled, Disabled{
				WebhookURL: c.Endpoint.URL, DisabledAt: now, LastError: describe(a),
				FailingFor: d.opts.DisableAfter.String(),
			}, now)); err != nil {
				return fmt.Errorf("record the disabling of merchant %s's webhook endpoint: %w", c.Delivery.Scope.MerchantID, err)
			}
			return nil
		})
	}
	if errs.Is(err, errs.Conflict) || errs.Is(err, errs.NotFound) {
		return false, nil // the lease ran out, or the endpoint or delivery is gone
	}
	return succeeded(a), err
}

// Disabled is the data of a webhook.disabled event.
type Disabled struct {
	WebhookURL string    `json:"webhook_url"`
	DisabledAt time.Time `json:"disabled_at"`
	FailingFor string    `json:"failing_for"` // at least this long without a success
	LastError  string    `json:"last_error"`
}

// succeeded reports whether an attempt got a 2xx.
func succeeded(a Attempt) bool {
	return a.Error == nil && a.StatusCode != nil && *a.StatusCode >= 200 && *a.StatusCode < 300
}

// next is the delivery's state after attempt a at now.
func next(dl Delivery, a Attempt, now time.Time) Delivery {
	dl.Attempts++
	dl.UpdatedAt = now
	if succeeded(a) {
		dl.Status, dl.NextAttemptAt, dl.LastError = Delivered, nil, nil
		return dl
	}
	msg := describe(a)
	dl.LastError = &msg
	if dl.Attempts > len(Schedule) {
		dl.Status, dl.NextAttemptAt = Failed, nil
		return dl
	}
	wait := Schedule[dl.Attempts-1]
	wait += time.Duration((rand.Float64()*2 - 1) * Jitter * float64(wait))
	at := now.Add(wait)
	dl.NextAttemptAt = &at
	return dl
}

func describe(a Attempt) string {
	if a.Error != nil {
		return *a.Error
	}
	return fmt.Sprintf("the endpoint answered HTTP %d", *a.StatusCode)
}

// send POSTs the event to the endpoint once and reports what happened.
func (d *Dispatcher) send(ctx context.Context, c Claim) Attempt {
	at := d.now().UTC()
	a := Attempt{AttemptedAt: at, URL: c.Endpoint.URL}
	fail := func(msg string) Attempt { a.Error = &msg; return a }

	body, err := json.Marshal(c.Event)
	if err != nil {
		return fail("the event could not be encoded")
	}
	secs, err := secrets(d.vault, c.Endpoint, at)
	if err != nil {
		return fail("the signing secret could not be opened")
	}
	sig, err := signatureHeader(secs, c.Event.ID, at, body)
	if err != nil {
		return fail("the signing secret is malformed")
	}
	rctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.Endpoint.URL, bytes.NewReader(body))
	if err != nil {
		return fail("the webhook URL is not valid")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "fundsource-webhooks/1")
	req.Header.Set("webhook-id", c.Event.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("webhook-signature", sig)

	start := time.Now()
	resp, err := d.client.Do(req)
	if err != nil {
		a.LatencyMS = int(time.Since(start).Milliseconds())
		return fail(transportError(err, d.opts.Timeout))
	}
	defer resp.Body.Close()
	buf, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	a.LatencyMS = int(time.Since(start).Milliseconds())
	code := resp.StatusCode
	a.StatusCode = &code
	a.ResponseBody = cleanText(buf)
	if code >= 300 && code < 400 {
		return fail(fmt.Sprintf("the endpoint answered HTTP %d (a redirect, which is not followed)", code))
	}
	return a
}

// transportError says why no response came, without Go's wrapping.
func transportError(err error, timeout time.Duration) string {
	var refused *RefusedError
	var nerr net.Error
	switch {
	case errors.As(err, &refused):
		return refused.Error()
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout()):
		return fmt.Sprintf("no response within %s", timeout)
	}
	var uerr interface{ Unwrap() error }
	if errors.As(err, &uerr) && uerr.Unwrap() != nil {
		err = uerr.Unwrap()
	}
	return "could not reach the endpoint: " + err.Error()
}

// cleanText makes a response body storable as text: valid UTF-8 without NULs.
func cleanText(b []byte) string {
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "")
}
