package banksim

import (
	"context"
	"encoding/json"
	"strings"
)

// state is the network's memory, so that a file read again, or a step
// run again on the same day, answers nothing twice.
type state struct {
	Files   map[string]fileState  `json:"files"`   // by outbox file name
	Entries map[string]entryState `json:"entries"` // by original trace number and file creation date (entryKey)
	Serial  int                   `json:"serial"`  // inbox files written
	Trace   int                   `json:"trace"`   // answers written: their trace sequence
	// Booked: the money booked on the originators' accounts, by outbox
	// or inbox file, date and direction (bookingKey), with the day it
	// was booked; Statements counts the statements written.
	Booked     map[string]string `json:"booked,omitempty"`
	Statements int               `json:"statements,omitempty"`
}

type fileState struct {
	SHA256  string `json:"sha256"`
	Read    string `json:"read"`    // the date the network first read it
	Settles string `json:"settles"` // its settlement date
}

type entryState struct {
	Settled  string `json:"settled,omitempty"`  // the settlement date, once passed
	Answer   string `json:"answer,omitempty"`   // the code sent
	Answered string `json:"answered,omitempty"` // the date it was sent
	File     string `json:"file,omitempty"`     // the inbox file that carried it
	Repeated string `json:"repeated,omitempty"` // the date the return was sent again
}

// entryKey names an entry in the state: a trace number with the date
// (YYMMDD) of the file it came in. Originators that restart their trace
// sequence each file date, and those whose sequence wraps, send the same
// trace number again on another date, so the trace number alone does not
// name an entry.
func entryKey(trace, created string) string { return trace + "@" + created }

// returned is the state of the entry a dishonored return's original trace
// number means: the newest entry with that trace number the network
// returned (another entry may carry the same trace on another date), else
// the newest with it.
func (st state) returned(trace string) entryState {
	var best, bestReturned string
	for k, es := range st.Entries {
		d, ok := strings.CutPrefix(k, trace+"@")
		if !ok {
			continue
		}
		best = max(best, d)
		if isReturn(es.Answer) {
			bestReturned = max(bestReturned, d)
		}
	}
	if bestReturned != "" {
		return st.Entries[entryKey(trace, bestReturned)]
	}
	return st.Entries[entryKey(trace, best)]
}

// StateError is a saved state that does not read back as the network's
// memory: the step stops rather than answer everything again.
type StateError struct{ Err error }

// Error says what did not read back.
func (e *StateError) Error() string { return "state: " + e.Err.Error() }

// Unwrap is the JSON decoder's error.
func (e *StateError) Unwrap() error { return e.Err }

// load reads the network's memory from its Exchange; none yet is an
// empty one.
func (n *Network) load(ctx context.Context) (state, error) {
	st := state{Files: map[string]fileState{}, Entries: map[string]entryState{}}
	data, err := n.Exchange.LoadState(ctx)
	if err != nil || data == nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, &StateError{Err: err}
	}
	if st.Files == nil {
		st.Files = map[string]fileState{}
	}
	if st.Entries == nil {
		st.Entries = map[string]entryState{}
	}
	return st, nil
}

// save hands the network's memory to its Exchange: indented JSON with a
// final newline, as state files have always been written.
func (n *Network) save(ctx context.Context, st state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return n.Exchange.SaveState(ctx, append(data, '\n'))
}
