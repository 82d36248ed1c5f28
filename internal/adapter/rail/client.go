// Package rail is the service's client of an instant payment rail (RTP or
// FedNow, through a partner bank's endpoint): it sends one ISO 20022
// pacs.008 credit transfer per request and reads the pacs.002 status report
// that answers it. It implements funding.Rail, and Payouts gives the
// payment service the funding service's rails (payment.InstantRails) with
// the client's errors in the payment package's terms.
//
// The messages are built from github.com/moov-io/iso20022's generated
// pacs.008.001.08 and pacs.002.001.10 types (the versions both rails
// exchange), which keep element names, order and value types to the
// published schemas without a hand-written copy of them; the package's own
// document wrappers add the namespaces, and only the two message packages
// are imported (not the library's all-messages document registry). A
// rail's pacs.002 is read in any version from .001.08 to .001.12: the few
// elements read have the same names in each, so one small structure reads
// them all, and the document's namespace says which versions are known.
//
// Outcomes are kept apart: a report (accepted, or rejected with a reason)
// is an answer about the account; a refused connection or a 5xx is ErrDown;
// no answer within the attempt's time is ErrTimeout. Both of the latter
// wrap funding.ErrRailUnavailable. An answer that cannot be read (or a
// status that settles nothing) is ErrUnreadable, wrapping
// funding.ErrRailAnswerUnknown: the rail took the credit, so it is not
// treated as never sent. A failed attempt is resent with the same
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

// Errors of a call: ErrDown and ErrTimeout wrap funding.ErrRailUnavailable
// (ErrTimeout funding.ErrRailNoAnswer too: the message may have arrived),
// ErrUnreadable funding.ErrRailAnswerUnknown. A call with an attempt that
// timed out returns ErrTimeout even when a later attempt found the rail
// down.
var (
	// ErrDown: the rail refused the connection or answered with an error
	// status.
	ErrDown = errors.New("instant rail down")
	// ErrTimeout: no answer within the attempt's time.
	ErrTimeout = errors.New("instant rail timed out")
	// ErrUnreadable: the rail answered the credit with a report that
	// cannot be read (another version, no status, ids that are not the
	// credit's), or with a status that is neither accepted nor
	// rejected. It wraps funding.ErrRailAnswerUnknown: the credit may
	// have been made.
	ErrUnreadable = errors.New("instant rail answer unreadable")
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
	var last, timedOut error
	for range c.opts.Attempts {
		r, err := c.send(ctx, body)
		if err == nil && r.OriginalMessageID != credit.MessageID {
			err = fmt.Errorf("%w: %w: the report answers message %q, not %q",
				funding.ErrRailAnswerUnknown, ErrUnreadable, r.OriginalMessageID, credit.MessageID)
		}
		if err == nil {
			err = known(r)
		}
		if err == nil {
			return answer(r), nil
		}
		if errors.Is(err, ErrUnreadable) {
			// The rail took the credit: a resend would get the same answer
			// from its record, and nothing else may replace the credit.
			if c.opts.Log != nil {
				c.opts.Log.Warn("instant rail answer unreadable: the credit's outcome is unknown", "message_id", credit.MessageID, "error", err.Error())
			}
			return funding.RailAnswer{}, err
		}
		last = err
		if errors.Is(err, ErrTimeout) {
			timedOut = err
		}
		if ctx.Err() != nil {
			return funding.RailAnswer{}, ctx.Err()
		}
	}
	if c.opts.Log != nil {
		c.opts.Log.Warn("instant rail unavailable", "message_id", credit.MessageID, "attempts", c.opts.Attempts, "error", last.Error())
	}
	if timedOut != nil {
		// An attempt that timed out may have reached the rail: a later
		// refusal does not make the call one the rail never took.
		return funding.RailAnswer{}, timedOut
	}
	return funding.RailAnswer{}, last
}

// known refuses a report whose status is neither accepted nor rejected
// (pending, received, …): it leaves the credit's fate unknown.
func known(r Report) error {
	switch r.Status {
	case StatusSettled, StatusAccepted, StatusRejected:
		return nil
	}
	return fmt.Errorf("%w: %w: transaction status %q", funding.ErrRailAnswerUnknown, ErrUnreadable, r.Status)
}

// answer turns an accepted or rejected report into the rail's answer.
func answer(r Report) funding.RailAnswer {
	at := r.At
	if at.IsZero() {
		at = time.Now().UTC()
	}
	if r.Status == StatusRejected {
		return funding.RailAnswer{Reason: r.Reason, At: at}
	}
	return funding.RailAnswer{Accepted: true, At: at}
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
			return Report{}, fmt.Errorf("%w: %w: %w after %s", funding.ErrRailUnavailable, funding.ErrRailNoAnswer, ErrTimeout, c.opts.AttemptTimeout)
		}
		return Report{}, fmt.Errorf("%w: %w: %v", funding.ErrRailUnavailable, ErrDown, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReport))
	if err != nil {
		if actx.Err() != nil && ctx.Err() == nil {
			return Report{}, fmt.Errorf("%w: %w: %w reading the report", funding.ErrRailUnavailable, funding.ErrRailNoAnswer, ErrTimeout)
		}
		return Report{}, fmt.Errorf("%w: %w: %v", funding.ErrRailUnavailable, ErrDown, err)
	}
	if resp.StatusCode != http.StatusOK {
		return Report{}, fmt.Errorf("%w: %w: HTTP %d", funding.ErrRailUnavailable, ErrDown, resp.StatusCode)
	}
	r, err := DecodeReport(data)
	if err != nil {
		return Report{}, fmt.Errorf("%w: %w: %v", funding.ErrRailAnswerUnknown, ErrUnreadable, err)
	}
	return r, nil
}
