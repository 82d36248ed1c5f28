// Package idempotency holds what the service keeps of an idempotent POST:
// the hash of the request, to tell a retry from a reuse of the key, and
// the first response, to replay it. internal/postgres stores them in the
// transaction of the request's own writes.
package idempotency

import (
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
// the same Idempotency-Key must send the same.
func RequestHash(method, path string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	h.Write(body)
	return h.Sum(nil)
}
