// Package railsim simulates an instant payment rail (RTP or FedNow behind a
// partner bank) for development, tests and the sandbox: it takes ISO 20022
// pacs.008 credit transfers over HTTP and answers each with a pacs.002
// status report, within a second. Sandbox account numbers choose the
// outcome (see Outcome); a switch takes the whole rail down. Sandbox keys
// reach it in process (Transport) when no rail is configured, so the
// fixtures work without an extra process; 'fundsource rail-sim' serves it
// on a port.
//
// A resend of a message id it has seen is answered from its record, as a
// rail does: one credit per message id. State is in memory.
package railsim

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/rail"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/funding"
)

// Sandbox account numbers and what the rail does with a credit to them, at
// any routing number.
const (
	AccountNoSuchAccount = "9900000003" // rejected AC03
	AccountClosed        = "9900000004" // rejected AC04
	AccountBlocked       = "9900000006" // rejected AC06
	AccountTimeout       = "9900000099" // no answer until the client gives up
	// AccountLate is credited (ACSC) when the message first arrives, but
	// that request gets no answer until the client gives up; a resend of
	// the message after one client call's attempts is answered from the
	// record: a rail that was slow to answer, which a status inquiry
	// settles.
	AccountLate = "9900000098"
)

// lateArrivals is how many arrivals of a message to AccountLate go
// unanswered: one client call's attempts.
const lateArrivals = rail.DefaultAttempts

// Outcome is the rejection reason a sandbox account number gets ("" for
// accepted) and whether the rail never answers.
func Outcome(accountNumber string) (reason string, timeout bool) {
	switch accountNumber {
	case AccountNoSuchAccount:
		return funding.ReasonNoSuchAccount, false
	case AccountClosed:
		return funding.ReasonClosed, false
	case AccountBlocked:
		return funding.ReasonBlocked, false
	case AccountTimeout:
		return "", true
	}
	return "", false
}

// maxHold bounds how long a timing-out credit holds its request when the
// client never gives up.
const maxHold = 30 * time.Second

// Credit is a credit the simulator received, as /sim/credits lists it.
type Credit struct {
	MessageID     string    `json:"message_id"`
	RoutingNumber string    `json:"routing_number"`
	LastFour      string    `json:"last_four"`
	AmountCents   int       `json:"amount_cents"`
	Remittance    string    `json:"remittance"`
	Status        string    `json:"status"`
	Reason        string    `json:"reason,omitempty"`
	ReceivedAt    time.Time `json:"received_at"`
}

// Sim is the simulated rail.
type Sim struct {
	// control is the bearer token of the /sim/… routes; "" serves none.
	// Those routes list every merchant's credits and switch the rail off
	// for everyone, so they answer only whoever started the simulator.
	control string

	mu      sync.Mutex
	down    bool              // guarded by mu
	reports map[string][]byte // message id → the report sent; guarded by mu
	// arrivals counts the arrivals of messages to AccountLate; guarded by mu
	arrivals map[string]int
	credits  []Credit // guarded by mu
}

// New returns a rail that is up.
func New() *Sim { return &Sim{reports: map[string][]byte{}, arrivals: map[string]int{}} }

// WithControlToken serves the /sim/… control and read routes to requests
// carrying "Authorization: Bearer token"; to any other they are 404, as
// they are without a token.
func (s *Sim) WithControlToken(token string) *Sim {
	s.control = token
	return s
}

// controlled answers 404 unless r carries the control token.
func (s *Sim) controlled(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if s.control == "" || !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.control)) != 1 {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}
}

// SetDown takes the rail down (true) or brings it back.
func (s *Sim) SetDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

// Credits returns the credits received, oldest first.
func (s *Sim) Credits() []Credit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.credits)
}

// Handler serves the rail: POST / (or /pacs.008) takes a pacs.008; with
// the control token, POST /sim/down and /sim/up flip the switch and GET
// /sim/credits lists what arrived.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{$}", s.credit)
	mux.HandleFunc("POST /pacs.008", s.credit)
	mux.HandleFunc("POST /sim/down", s.controlled(func(w http.ResponseWriter, r *http.Request) {
		s.SetDown(true)
		writeJSON(w, map[string]bool{"down": true})
	}))
	mux.HandleFunc("POST /sim/up", s.controlled(func(w http.ResponseWriter, r *http.Request) {
		s.SetDown(false)
		writeJSON(w, map[string]bool{"down": false})
	}))
	mux.HandleFunc("GET /sim/credits", s.controlled(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"data": s.Credits()})
	}))
	return mux
}

// Transport serves requests with the simulator in process, for an
// http.Client of the service (the sandbox's rail when none is configured).
func (s *Sim) Transport() http.RoundTripper { return inProcess{s.Handler()} }

type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	done := make(chan *http.Response, 1)
	go func() {
		rec := httptest.NewRecorder()
		t.h.ServeHTTP(rec, req)
		done <- rec.Result()
	}()
	select {
	case resp := <-done:
		return resp, nil
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

func (s *Sim) credit(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		http.Error(w, "rail unavailable", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		http.Error(w, "cannot read the message", http.StatusBadRequest)
		return
	}
	c, err := rail.DecodeCredit(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	reason, timeout := Outcome(c.AccountNumber)
	late := false
	if c.AccountNumber == AccountLate {
		s.mu.Lock()
		s.arrivals[c.MessageID]++
		late = s.arrivals[c.MessageID] <= lateArrivals
		s.mu.Unlock()
	}
	if timeout {
		select {
		case <-r.Context().Done():
		case <-time.After(maxHold):
		}
		return
	}
	s.mu.Lock()
	report, seen := s.reports[c.MessageID]
	if !seen {
		now := time.Now().UTC()
		rep := rail.Report{MessageID: ids.New("rpt_"), OriginalMessageID: c.MessageID, Status: rail.StatusSettled, At: now}
		if reason != "" {
			rep.Status, rep.Reason = rail.StatusRejected, reason
		}
		report, err = rail.EncodeReport(rep)
		if err == nil {
			s.reports[c.MessageID] = report
			s.credits = append(s.credits, Credit{MessageID: c.MessageID, RoutingNumber: c.RoutingNumber,
				LastFour: lastFour(c.AccountNumber), AmountCents: c.AmountCents, Remittance: c.Remittance,
				Status: rep.Status, Reason: reason, ReceivedAt: now})
		}
	}
	s.mu.Unlock()
	if err != nil {
		http.Error(w, "cannot write the report", http.StatusInternalServerError)
		return
	}
	if late {
		select {
		case <-r.Context().Done():
		case <-time.After(maxHold):
		}
		return
	}
	w.Header().Set("Content-Type", rail.ContentType)
	_, _ = w.Write(report)
}

func lastFour(n string) string {
	if len(n) <= 4 {
		return n
	}
	return n[len(n)-4:]
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
