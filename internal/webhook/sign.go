package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret (Standard Webhooks).
const SecretPrefix = "whsec_"

// NewSecret returns a fresh signing secret: whsec_ and 32 random bytes in
// standard base64.
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

var errSecret = errors.New("webhook: malformed signing secret")

// Sign returns the Standard Webhooks signature "v1,<base64 HMAC-SHA256>" of
// msgID, the timestamp (Unix seconds) and the body, keyed by the decoded secret.
func Sign(secret, msgID string, at time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return "", errSecret
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(at.Unix(), 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// signatureHeader signs with every given secret and joins the signatures
// with spaces, as the webhook-signature header carries them.
func signatureHeader(secrets []string, msgID string, at time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sig, err := Sign(s, msgID, at, body)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// Tolerance is how far a delivery's timestamp may be from the receiver's
// clock before Verify refuses it (replay protection).
const Tolerance = 5 * time.Minute

// ErrSignature is returned by Verify for a delivery that is not authentic.
var ErrSignature = errors.New("webhook: no valid signature")

// Verify checks a delivery as a receiver must: the webhook-timestamp is
// within Tolerance of now and one of the webhook-signature entries is the
// v1 signature of webhook-id, webhook-timestamp and the raw body under secret.
// It is the check docs/walkthrough.md shows merchants and the dev receiver runs.
func Verify(secret string, header http.Header, body []byte, now time.Time) error {
	id, ts := header.Get("webhook-id"), header.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return ErrSignature
	}
	at := time.Unix(sec, 0)
	if now.Sub(at) > Tolerance || at.Sub(now) > Tolerance {
		return fmt.Errorf("%w: timestamp outside the %s tolerance", ErrSignature, Tolerance)
	}
	want, err := Sign(secret, id, at, body)
	if err != nil {
		return err
	}
	for _, got := range strings.Fields(header.Get("webhook-signature")) {
		if hmac.Equal([]byte(got), []byte(want)) {
			return nil
		}
	}
	return ErrSignature
}
