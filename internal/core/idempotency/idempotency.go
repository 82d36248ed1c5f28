// Package idempotency holds what the service keeps of an idempotent POST:
// the hash of the request, to tell a retry from a reuse of the key, and
// the first response, to replay it.
//
// A request's writes and its stored response commit in one transaction:
// a crash mid-request leaves nothing, and a retry with the same key runs
// afresh. The HTTP layer (web/api) owns the key: it takes the claim before
// the handler runs and stores the answer after it, and the store
// (internal/adapter/postgres) runs both in the request's transaction. A claim is a
// transaction-level advisory lock on the key plus a check that no live
// response is stored under it: a second request with the key while the
// first still runs is refused with request_in_progress at once, rather
// than waiting for the first to finish.
package idempotency

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// TTL is how long a first response is kept for replay.
const TTL = 24 * time.Hour

// Response is a stored first response to an idempotent POST.
type Response struct {
	Status int
	Body   []byte
}

// Request is an idempotent request: its scope, its Idempotency-Key, the
// hash of its method, path and body (RequestHash), and when it arrived.
type Request struct {
	Scope tenant.Scope
	Key   string
	Hash  []byte
	Now   time.Time
}

// Since is the moment before which a stored response has expired.
func (r Request) Since() time.Time { return r.Now.Add(-TTL) }

// LockID is the key's advisory lock: 64 bits of the SHA-256 of its scope
// and key.
func (r Request) LockID() int64 {
	h := sha256.Sum256([]byte("idem\x00" + r.Scope.MerchantID + "\x00" + string(r.Scope.Env) + "\x00" + r.Key))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

// Stored is a response found under a key, with the hash of the request
// that stored it.
type Stored struct {
	Hash     []byte
	Response Response
}

// Replay is the answer to r when a response is stored under its key: the
// stored response when r is the same request, else idempotency_key_reused.
func (r Request) Replay(s Stored) (*Response, error) {
	if !bytes.Equal(s.Hash, r.Hash) {
		return nil, errs.New(errs.IdempotencyKeyReused,
			"This Idempotency-Key was already used with a different request; use a new key for a new request.")
	}
	return &s.Response, nil
}

// InProgress is the refusal of a request whose key another request holds.
func InProgress() error {
	return errs.New(errs.RequestInProgress, "A request with this Idempotency-Key is still being processed; retry shortly.")
}

// RequestHash identifies a request's method, path and body: a retry with
// the same Idempotency-Key must send the same. It is keyed (HMAC-SHA256
// with the server's IDEMPOTENCY_KEY): the body may hold a full account
// number, and an unkeyed hash beside the stored response (which names the
// bank and the last four digits) would let a database reader find it by
// trying the few remaining guesses.
func RequestHash(key []byte, method, path string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(method + " " + path + "\n"))
	h.Write(body)
	return h.Sum(nil)
}
