package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
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

// DispatcherOptions tune a Dispatcher; zero values take the defaults.
type DispatcherOptions struct {
	Workers     int           // concurrent deliveries of this process; default 8
	PerEndpoint int           // concurrent deliveries to one endpoint from this process; default 4
	Poll        time.Duration // how often to look for due deliveries without a notification; default 1 s
	Timeout     time.Duration // limit of one attempt; default (and at most) Timeout
	Logger      *slog.Logger
}

// Dispatcher sends due deliveries. Every process of the service runs one; a
// delivery is claimed with FOR UPDATE SKIP LOCKED inside a transaction that
// stays open while it is sent, so two processes never send the same attempt,
// and when a process dies its row lock goes with its connection and another
// process takes the delivery over.
type Dispatcher struct {
	store  Store
	vault  Vault
	client *http.Client
	now    func() time.Time
	opts   DispatcherOptions

	mu       sync.Mutex
	inFlight map[string]int // deliveries being sent per endpoint key; guarded by mu
}

// NewDispatcher returns a Dispatcher sending with client.
func NewDispatcher(store Store, vault Vault, client *http.Client, now func() time.Time, opts DispatcherOptions) *Dispatcher {
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.PerEndpoint <= 0 {
		opts.PerEndpoint = 4
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Timeout <= 0 || opts.Timeout > Timeout {
		opts.Timeout = Timeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Dispatcher{store: store, vault: vault, client: client, now: now, opts: opts, inFlight: map[string]int{}}
}

// Run delivers until ctx ends: its workers look for due deliveries when wake
// fires (a PostgreSQL notification), every Poll, and after each delivery.
// When ctx ends it stops claiming and waits for the deliveries being sent
// (at most Timeout) to be recorded.
func (d *Dispatcher) Run(ctx context.Context, wake <-chan struct{}) {
	// One kick wakes one idle worker. A worker that claims a delivery kicks
	// another before sending it, so a backlog draws in as many workers as
	// it needs, while a single event costs about two claims rather than
	// one per worker (every worker at every wake-up claimed 7 times per
	// event at 500 events/s: 'make bench').
	kicks := make(chan struct{}, d.opts.Workers)
	kick := func() {
		select {
		case kicks <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	for range d.opts.Workers {
		wg.Go(func() { d.work(ctx, kicks, kick) })
	}
	t := time.NewTicker(d.opts.Poll)
	defer t.Stop()
	for {
		kick()
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-wake:
		case <-t.C:
		}
	}
}

func (d *Dispatcher) work(ctx context.Context, kicks <-chan struct{}, kick func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-kicks:
		}
		for ctx.Err() == nil {
			found, err := d.deliverOne(ctx, kick)
			if err != nil {
				if ctx.Err() == nil {
					d.opts.Logger.Warn("webhook delivery failed", slog.Any("error", err))
				}
				break
			}
			if !found {
				break
			}
		}
	}
}

// DeliverDue sends every delivery due now, one after another, and returns
// how many it sent. Tests drive the dispatcher with it and an injected clock.
func (d *Dispatcher) DeliverDue(ctx context.Context) (int, error) {
	n := 0
	for {
		found, err := d.deliverOne(ctx, nil)
		if err != nil || !found {
			return n, err
		}
		n++
	}
}

var errEndpointBusy = errors.New("webhook: endpoint at its concurrency limit")

func endpointKey(c Claim) string {
	return c.Delivery.Scope.MerchantID + "/" + string(c.Delivery.Scope.Env)
}

func (d *Dispatcher) busy() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for k, n := range d.inFlight {
		if n >= d.opts.PerEndpoint {
			out = append(out, k)
		}
	}
	return out
}

func (d *Dispatcher) acquire(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight[key] >= d.opts.PerEndpoint {
		return false
	}
	d.inFlight[key]++
	return true
}

func (d *Dispatcher) release(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight[key]--; d.inFlight[key] <= 0 {
		delete(d.inFlight, key)
	}
}

// deliverOne claims the delivery due first, sends it and records the
// attempt, all in one transaction. It runs detached from ctx's cancellation
// so that a shutdown lets the attempt finish and be recorded; found is false
// when nothing was due.
// deliverOne claims the delivery due first and sends it; claimed (when not
// nil) runs once the claim is made, before the send.
func (d *Dispatcher) deliverOne(ctx context.Context, claimed func()) (found bool, err error) {
	err = d.store.WithTx(context.WithoutCancel(ctx), func(tx context.Context) error {
		c, ok, err := d.store.ClaimDelivery(tx, d.now().UTC(), d.busy())
		if err != nil || !ok {
			return err
		}
		key := endpointKey(c)
		if !d.acquire(key) {
			return errEndpointBusy // another worker filled the slot: roll back, claim again
		}
		defer d.release(key)
		found = true
		if claimed != nil {
			claimed()
		}
		a := d.send(tx, c)
		return d.store.FinishDelivery(tx, next(c.Delivery, a, d.now().UTC()), a)
	})
	if errors.Is(err, errEndpointBusy) {
		return true, nil
	}
	return found, err
}

// next is the delivery's state after attempt a at now.
func next(dl Delivery, a Attempt, now time.Time) Delivery {
	dl.Attempts++
	dl.UpdatedAt = now
	if a.Error == nil && a.StatusCode != nil && *a.StatusCode >= 200 && *a.StatusCode < 300 {
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
