// Package rail is the service's client of an instant payment rail (RTP or
// FedNow, through a partner bank's endpoint): it sends one ISO 20022
// pacs.008 credit transfer per request and reads the pacs.002 status report
// that answers it. It implements funding.Rail.
//
// The messages are built from github.com/moov-io/iso20022's generated
// pacs.008.001.08 and pacs.002.001.10 types (the versions both rails
// exchange), which keep element names, order and value types to the
// published schemas without a hand-written copy of them; the package's own
// document wrappers add the namespaces, and only the two message packages
// are imported (not the library's all-messages document registry).
//
// Outcomes are kept apart: a report (accepted, or rejected with a reason)
// is an answer about the account; a refused connection or a 5xx is ErrDown;
// no answer within the attempt's time is ErrTimeout. Both of the latter
// wrap funding.ErrRailUnavailable. A failed attempt is resent with the same
// bytes, so the same message id: a rail that received the first copy
// answers the resend from its record instead of crediting twice. The
// account number travels only in the message body and is never logged.
package rail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/fundsource/fundsource/internal/funding"
)

// Errors that wrap funding.ErrRailUnavailable.
var (
	// ErrDown: the rail refused the connection or answered with an error
	// status.
	ErrDown = errors.New("instant rail down")
	// ErrTimeout: no answer within the attempt's time.
	ErrTimeout = errors.New("instant rail timed out")
)

// Defaults: a rail answers within a second; two attempts bound a call.
const (
	DefaultAttemptTimeout = 1500 * time.Millisecond
	DefaultAttempts       = 2
	maxReport             = 64 << 10
)

// Options tune a Client; zero values take the defaults.
type Options struct {
	// HTTP sends the messages (a transport of its own in tests or for the
	// in-process simulator); nil uses a client without redirects.
	HTTP           *http.Client
	AttemptTimeout time.Duration
	Attempts       int
	// Debtor is the originator named in every credit.
	Debtor Party
	Now    func() time.Time
	// Log gets one warning per call the rail did not answer (message id
	// and error only); nil logs nothing.
	Log *slog.Logger
}

// Client sends credits to one rail endpoint.
type Client struct {
	url  string
	opts Options
}

// New returns a client of the rail endpoint at url (pacs.008 is POSTed
// there).
func New(url string, opts Options) *Client {
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = DefaultAttemptTimeout
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	if opts.Debtor.Name == "" {
		opts.Debtor.Name = "fundsource"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Client{url: url, opts: opts}
}

// Credit sends c and returns the rail's answer. Errors wrap ErrDown or
// ErrTimeout (and so funding.ErrRailUnavailable), or are the caller's
// context ending.
func (c *Client) Credit(ctx context.Context, credit funding.InstantCredit) (funding.RailAnswer, error) {
	body, err := EncodeCredit(credit, c.opts.Debtor, c.opts.Now())
	if err != nil {
		return funding.RailAnswer{}, fmt.Errorf("encode pacs.008: %w", err)
	}
	var last error
	for range c.opts.Attempts {
		r, err := c.send(ctx, body)
		if err == nil {
			if r.OriginalMessageID != credit.MessageID {
				return funding.RailAnswer{}, fmt.Errorf("%w: %w: the report answers message %q, not %q",
					funding.ErrRailUnavailable, ErrDown, r.OriginalMessageID, credit.MessageID)
			}
			return answer(r)
		}
		last = err
		if ctx.Err() != nil {
			return funding.RailAnswer{}, ctx.Err()
		}
	}
	if c.opts.Log != nil {
		c.opts.Log.Warn("instant rail unavailable", "message_id", credit.MessageID, "attempts", c.opts.Attempts, "error", last.Error())
	}
	return funding.RailAnswer{}, last
}

// answer turns a report into the rail's answer; a status other than
// accepted or rejected leaves the credit's fate unknown.
func answer(r Report) (funding.RailAnswer, error) {
	at := r.At
	if at.IsZero() {
		at = time.Now().UTC()
	}
	switch r.Status {
	case StatusSettled, StatusAccepted:
		return funding.RailAnswer{Accepted: true, At: at}, nil
	case StatusRejected:
		return funding.RailAnswer{Reason: r.Reason, At: at}, nil
	}
	return funding.RailAnswer{}, fmt.Errorf("%w: %w: transaction status %q", funding.ErrRailUnavailable, ErrDown, r.Status)
}

// send is one attempt.
func (c *Client) send(ctx context.Context, body []byte) (Report, error) {
	actx, cancel := context.WithTimeout(ctx, c.opts.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Report{}, fmt.Errorf("%w: %w: %v", funding.ErrRailUnavailable, ErrDown, err)
	}
	req.Header.Set("Content-Type", ContentType)
	req.Header.Set("Accept", ContentType)
	resp, err := c.opts.HTTP.Do(req)
	if err != nil {
		if actx.Err() != nil && ctx.Err() == nil {
			return Report{}, fmt.Errorf("%w: %w after %s", funding.ErrRailUnavailable, ErrTimeout, c.opts.AttemptTimeout)
		}
		return Report{}, fmt.Errorf("%w: %w: %v", funding.ErrRailUnavailable, ErrDown, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReport))
	if err != nil {
		if actx.Err() != nil && ctx.Err() == nil {
			return Report{}, fmt.Errorf("%w: %w reading the report", funding.ErrRailUnavailable, ErrTimeout)
		}
		return Report{}, fmt.Errorf("%w: %w: %v", funding.ErrRailUnavailable, ErrDown, err)
	}
	if resp.StatusCode != http.StatusOK {
		return Report{}, fmt.Errorf("%w: %w: HTTP %d", funding.ErrRailUnavailable, ErrDown, resp.StatusCode)
	}
	r, err := DecodeReport(data)
	if err != nil {
		return Report{}, fmt.Errorf("%w: %w: %v", funding.ErrRailUnavailable, ErrDown, err)
	}
	return r, nil
}
