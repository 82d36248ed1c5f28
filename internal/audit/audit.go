// Package audit is the merchant's security log: who changed what that
// matters for the account's safety (keys, webhooks, sign-ins, passwords,
// settings, permissions, mandates, unblocks), from which address.
//
// A use case records its event through its store's Recorder inside the
// transaction of the change, so the change and its event commit together
// or not at all. A refused sign-in changes nothing and is recorded alone.
//
// The actor comes from the request and is passed to the service method as
// a value (an API key, a dashboard user, an operator at the CLI); nothing
// about it travels in a context.
//
// Each merchant's events form a hash chain: event n carries sequence
// number n and hash = HMAC-SHA256 under AUDIT_KEY of (hash of event n-1 ‖
// canonical JSON of event n), the first event chaining from no bytes. The
// canonical JSON is the event without its hash, keys in lexical order, no
// whitespace, times in UTC at microseconds (what PostgreSQL keeps) and no
// HTML escaping. Events written before the key (version 1) are hashed
// with plain SHA-256 and no version field; they verify as before, but
// only as a chain's beginning: an unkeyed event after a keyed one is a
// break, since anyone can compute SHA-256. The store appends under a lock
// on the merchant's chain head, so concurrent writers still make one
// line, and keeps the head (last sequence number and hash) beside the
// chain.
//
// What lives in the database can be rewritten by whoever can write to it,
// the head included: the key is what keeps such a writer from re-hashing
// a changed chain, and the checkpoints are what notice the newest events
// or a merchant's whole log removed. Every minute the service appends
// each merchant's head, when it changed, to a file outside the database
// (Checkpointer). Verify recomputes a chain under the key and names the
// first event that does not fit: a changed row breaks its own hash, a
// removed one leaves a gap in the numbers, a re-hashed one fails the key
// (and its checkpoint), and a chain that ends below a checkpoint, or is
// gone while a checkpoint names it, was cut. What the chain cannot show:
// changes by someone holding both the database and AUDIT_KEY, and the
// newest events removed before their first checkpoint (up to a minute).
//
// Details hold only what helps a person read the log (a URL's host, a
// permission's name, a session count): never a secret, a password, a token
// or an account number.
package audit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// The actions recorded.
const (
	APIKeyRolled                = "api_key.rolled"
	WebhookURLSet               = "webhook.url_set"
	WebhookDeleted              = "webhook.deleted"
	WebhookSecretRolled         = "webhook.secret_rolled"
	WebhookEnabled              = "webhook.enabled"
	DashboardSignedIn           = "dashboard.signed_in"
	DashboardSignInFailed       = "dashboard.sign_in_failed"
	DashboardSignedOut          = "dashboard.signed_out"
	DashboardSessionsRevoked    = "dashboard.sessions_revoked"
	DashboardPasswordChanged    = "dashboard.password_changed"
	SettingsChanged             = "settings.changed"
	MerchantProductionActivated = "merchant.production_activated"
	MerchantPermissionChanged   = "merchant.permission_changed"
	MandateRevoked              = "mandate.revoked"
	FundingSourceUnblocked      = "funding_source.unblocked"
	OriginatorChanged           = "originator.changed"
	OriginatorActivated         = "originator.activated"
	OriginatorSuspended         = "originator.suspended"
	// ACHAnswerMatched: an operator applied an answer from the bank that
	// matched no single entry to one of the merchant's payments.
	ACHAnswerMatched = "ach_answer.matched"
)

// Actor types.
const (
	ByAPIKey        = "api_key"
	ByDashboardUser = "dashboard_user"
	ByOperator      = "operator"
)

// Actor is who made a change: an API key (its key_… id), a dashboard user
// (the merchant's id), or an operator (the operating-system user at the
// CLI), with the client address it came from ("" at the CLI).
type Actor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	IP   string `json:"ip"`
}

// APIKey is the actor of an API request made with key keyID from ip.
func APIKey(keyID, ip string) Actor { return Actor{Type: ByAPIKey, ID: keyID, IP: ip} }

// DashboardUser is the actor of a signed-in dashboard request.
func DashboardUser(merchantID, ip string) Actor {
	return Actor{Type: ByDashboardUser, ID: merchantID, IP: ip}
}

// Operator is the actor of a CLI subcommand run by user.
func Operator(user string) Actor { return Actor{Type: ByOperator, ID: user} }

// Entry is an event as a use case records it; the store gives it its id,
// time, sequence number and hash.
type Entry struct {
	MerchantID string
	Env        tenant.Environment // "" for the account as a whole (sign-ins, passwords)
	Action     string
	Actor      Actor
	Details    map[string]string // nil for none
}

// In is e for scope's merchant and environment.
func In(scope tenant.Scope, action string, actor Actor, details map[string]string) Entry {
	return Entry{MerchantID: scope.MerchantID, Env: scope.Env, Action: action, Actor: actor, Details: details}
}

// Account is e for the merchant's account as a whole.
func Account(merchantID, action string, actor Actor, details map[string]string) Entry {
	return Entry{MerchantID: merchantID, Action: action, Actor: actor, Details: details}
}

// Recorder appends an event to its merchant's chain; called inside the
// transaction of the change.
type Recorder interface {
	RecordAudit(ctx context.Context, e Entry) error
}

// Event is a recorded event, a link of its merchant's chain.
type Event struct {
	ID         string
	MerchantID string
	Seq        int64
	Env        tenant.Environment
	Action     string
	Actor      Actor
	CreatedAt  time.Time // UTC, microseconds
	Details    map[string]string
	Version    int // Unkeyed or Keyed: how Hash is made
	Hash       []byte
	// IPHidden shows the actor's IP as null (not part of the chain): a
	// sandbox key sees account-wide events without their addresses.
	IPHidden bool
}

// Hash versions of an event.
const (
	Unkeyed = 1 // SHA-256, events written before AUDIT_KEY
	Keyed   = 2 // HMAC-SHA256 under AUDIT_KEY
)

// New makes the event that follows the chain head (seq, hash) at now,
// hashed under key (unkeyed without one, which only tests of the chain's
// older form do).
func New(e Entry, headSeq int64, headHash []byte, now time.Time, key []byte) Event {
	ev := Event{ID: ids.New(ids.Audit), MerchantID: e.MerchantID, Seq: headSeq + 1, Env: e.Env,
		Action: e.Action, Actor: e.Actor, CreatedAt: now.UTC().Truncate(time.Microsecond), Details: e.Details, Version: Keyed}
	if ev.Details == nil {
		ev.Details = map[string]string{}
	}
	if key == nil {
		ev.Version = Unkeyed
	}
	ev.Hash = Link(key, headHash, ev)
	return ev
}

// canonical is an event's hashed form: fields in lexical order of their
// JSON names.
type canonical struct {
	Action      string            `json:"action"`
	Actor       Actor             `json:"actor"`
	CreatedAt   string            `json:"created_at"`
	Details     map[string]string `json:"details"`
	Environment *string           `json:"environment"`
	ID          string            `json:"id"`
	MerchantID  string            `json:"merchant_id"`
	Seq         int64             `json:"seq"`
	Version     int               `json:"version,omitempty"` // absent in unkeyed events
}

// Canonical is the event's canonical JSON (see the package doc).
func Canonical(e Event) []byte {
	c := canonical{Action: e.Action, Actor: e.Actor, CreatedAt: e.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z"),
		Details: e.Details, ID: e.ID, MerchantID: e.MerchantID, Seq: e.Seq}
	if e.Version >= Keyed {
		c.Version = e.Version
	}
	if c.Details == nil {
		c.Details = map[string]string{}
	}
	if e.Env != "" {
		env := string(e.Env)
		c.Environment = &env
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(c) // strings, maps of strings and numbers always encode
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Link is the hash of e following an event whose hash is prev: keyed
// under key, or plain SHA-256 for an unkeyed event.
func Link(key, prev []byte, e Event) []byte {
	h := sha256.New()
	if e.Version >= Keyed {
		h = hmac.New(sha256.New, key)
	}
	h.Write(prev)
	h.Write(Canonical(e))
	return h.Sum(nil)
}

// Break is the first event of a chain that does not fit, and why.
type Break struct {
	Seq     int64  // the sequence number expected at that place
	EventID string // "" when events are missing at the end
	Reason  string
}

func (b *Break) Error() string {
	if b.EventID == "" {
		return fmt.Sprintf("event %d: %s", b.Seq, b.Reason)
	}
	return fmt.Sprintf("event %d (%s): %s", b.Seq, b.EventID, b.Reason)
}

// Verifier checks one merchant's chain an event at a time: Next with each
// event in stored order (by sequence number), then End with the head the
// store keeps (its last sequence number and hash; 0 and nil when the
// merchant has none). Each returns the first break, or nil. Key is
// AUDIT_KEY; Checkpoints are the merchant's checkpoints from the file.
type Verifier struct {
	Key         []byte
	Checkpoints []Checkpoint

	prev   []byte
	n      int64
	lastID string
	keyed  bool // a keyed event was seen
	byseq  map[int64]Checkpoint
}

// Next checks the event that comes next in stored order.
func (v *Verifier) Next(e Event) *Break {
	if v.byseq == nil {
		v.byseq = map[int64]Checkpoint{}
		for _, c := range v.Checkpoints {
			v.byseq[c.Seq] = c
		}
	}
	want := v.n + 1
	switch {
	case e.Seq != want:
		return &Break{Seq: want, EventID: e.ID, Reason: fmt.Sprintf("found sequence number %d: an event is missing or out of order", e.Seq)}
	case e.Version < Keyed && v.keyed:
		return &Break{Seq: want, EventID: e.ID, Reason: "an unkeyed event follows keyed ones: it was re-hashed without the key"}
	case !hmac.Equal(Link(v.Key, v.prev, e), e.Hash):
		return &Break{Seq: want, EventID: e.ID, Reason: "its hash does not match its content and the previous event's hash under the key: it was changed, moved or re-hashed"}
	}
	if c, ok := v.byseq[want]; ok && c.Hash != HashHex(e.Hash) {
		return &Break{Seq: want, EventID: e.ID, Reason: fmt.Sprintf("its hash differs from the checkpoint of %s: the chain was re-hashed", c.Time.UTC().Format(time.RFC3339))}
	}
	v.prev, v.n, v.lastID, v.keyed = e.Hash, want, e.ID, v.keyed || e.Version >= Keyed
	return nil
}

// End checks the chain's end against the stored head and the checkpoints.
func (v *Verifier) End(headSeq int64, headHash []byte) *Break {
	var last Checkpoint
	for _, c := range v.Checkpoints {
		if c.Seq > last.Seq {
			last = c
		}
	}
	switch {
	case v.n == 0 && headSeq == 0 && last.Seq > 0:
		return &Break{Seq: 1, Reason: fmt.Sprintf("the merchant's log is gone but the checkpoint of %s names event %d: it was deleted",
			last.Time.UTC().Format(time.RFC3339), last.Seq)}
	case headSeq > v.n:
		return &Break{Seq: v.n + 1, Reason: fmt.Sprintf("the chain ends at %d but its head says %d: events were removed", v.n, headSeq)}
	case headSeq < v.n:
		return &Break{Seq: v.n, EventID: v.lastID, Reason: fmt.Sprintf("the head says the chain ends at %d: events were added outside the service", headSeq)}
	case !bytes.Equal(v.prev, headHash):
		return &Break{Seq: v.n, EventID: v.lastID, Reason: "the last event's hash does not match the chain head"}
	case last.Seq > v.n:
		return &Break{Seq: v.n + 1, Reason: fmt.Sprintf("the chain ends at %d but the checkpoint of %s names event %d: the newest events were removed",
			v.n, last.Time.UTC().Format(time.RFC3339), last.Seq)}
	}
	return nil
}

// Verify checks a whole chain held in memory under key against the
// merchant's checkpoints (see Verifier).
func Verify(key []byte, events []Event, headSeq int64, headHash []byte, checkpoints []Checkpoint) *Break {
	v := Verifier{Key: key, Checkpoints: checkpoints}
	for _, e := range events {
		if b := v.Next(e); b != nil {
			return b
		}
	}
	return v.End(headSeq, headHash)
}

// HashHex is a hash as the API shows it.
func HashHex(h []byte) string { return hex.EncodeToString(h) }

// MarshalJSON writes the API's audit event: {id, seq, action, actor
// (its ip null when IPHidden), environment (null for the whole account),
// created_at, details, hash}.
func (e Event) MarshalJSON() ([]byte, error) {
	var env *string
	if e.Env != "" {
		s := string(e.Env)
		env = &s
	}
	details := e.Details
	if details == nil {
		details = map[string]string{}
	}
	type shownActor struct {
		Type string  `json:"type"`
		ID   string  `json:"id"`
		IP   *string `json:"ip"`
	}
	actor := shownActor{Type: e.Actor.Type, ID: e.Actor.ID, IP: &e.Actor.IP}
	if e.IPHidden {
		actor.IP = nil
	}
	return json.Marshal(struct {
		ID          string            `json:"id"`
		Seq         int64             `json:"seq"`
		Action      string            `json:"action"`
		Actor       shownActor        `json:"actor"`
		Environment *string           `json:"environment"`
		CreatedAt   time.Time         `json:"created_at"`
		Details     map[string]string `json:"details"`
		Hash        string            `json:"hash"`
	}{e.ID, e.Seq, e.Action, actor, env, e.CreatedAt.UTC(), details, HashHex(e.Hash)})
}
