// Package idempotency holds what the service keeps of an idempotent POST:
// the hash of the request, to tell a retry from a reuse of the key, and
// the first response, to replay it. internal/postgres stores them in the
// transaction of the request's own writes.
package idempotency

import (
	"crypto/hmac"
	"crypto/sha256"
	"time"
)

// TTL is how long a first response is kept for replay.
const TTL = 24 * time.Hour

// Response is a stored first response to an idempotent POST.
type Response struct {
	Status int
	Body   []byte
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

// Answer renders the success response of a request whose use case can
// finish in one statement: the status and body the handler sends for the
// use case's result. A store that commits such a use case in one statement
// stores this response in that same statement, and the request needs no
// transaction of its own. Only requests whose handlers write through
// transactions or through such statements may be given one.
type Answer func(result any) Response
