package surface

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// statusOf is the one code → HTTP status table of the service.
var statusOf = map[errs.Code]int{
	errs.InvalidRequest:               http.StatusBadRequest,
	errs.InvalidRoutingNumber:         http.StatusBadRequest,
	errs.InvalidAccountNumber:         http.StatusBadRequest,
	errs.InvalidAccountType:           http.StatusBadRequest,
	errs.InvalidAmounts:               http.StatusBadRequest,
	errs.VerificationFailed:           http.StatusBadRequest,
	errs.InvalidProcessorToken:        http.StatusBadRequest,
	errs.InvalidURL:                   http.StatusBadRequest,
	errs.InvalidAmount:                http.StatusBadRequest,
	errs.AuthorizationRequired:        http.StatusBadRequest,
	errs.FundingSourceBlocked:         http.StatusForbidden,
	errs.UnblockLimit:                 http.StatusConflict,
	errs.RetryNotAllowed:              http.StatusConflict,
	errs.ReversalWindowClosed:         http.StatusConflict,
	errs.RefundNotAllowed:             http.StatusConflict,
	errs.ReinitiationRequired:         http.StatusConflict,
	errs.MandatesActive:               http.StatusConflict,
	errs.OriginatorNotActive:          http.StatusForbidden,
	errs.LimitExceeded:                http.StatusUnprocessableEntity,
	errs.Unauthorized:                 http.StatusUnauthorized,
	errs.PermissionDenied:             http.StatusForbidden,
	errs.ProcessorNotEnabled:          http.StatusForbidden,
	errs.DebitNotAllowed:              http.StatusForbidden,
	errs.CustomerNotFound:             http.StatusNotFound,
	errs.FundingSourceNotFound:        http.StatusNotFound,
	errs.EventNotFound:                http.StatusNotFound,
	errs.WebhookNotFound:              http.StatusNotFound,
	errs.PaymentNotFound:              http.StatusNotFound,
	errs.SubscriptionNotFound:         http.StatusNotFound,
	errs.TestClockNotFound:            http.StatusNotFound,
	errs.NotFound:                     http.StatusNotFound,
	errs.RouteNotFound:                http.StatusNotFound,
	errs.MethodNotAllowed:             http.StatusMethodNotAllowed,
	errs.AccountInUse:                 http.StatusConflict,
	errs.DuplicateFundingSource:       http.StatusConflict,
	errs.FundingSourceAlreadyVerified: http.StatusConflict,
	errs.VerificationNotInitiated:     http.StatusConflict,
	errs.VerificationPending:          http.StatusConflict,
	errs.VerificationAttemptsExceeded: http.StatusConflict,
	errs.VerificationExpired:          http.StatusConflict,
	errs.VerificationLimitReached:     http.StatusConflict,
	errs.FundingSourceRemoved:         http.StatusConflict,
	errs.IdempotencyKeyReused:         http.StatusConflict,
	errs.RequestInProgress:            http.StatusConflict,
	errs.Conflict:                     http.StatusConflict,
	errs.RequestTooLarge:              http.StatusRequestEntityTooLarge,
	errs.UnsupportedMediaType:         http.StatusUnsupportedMediaType,
	errs.RateLimited:                  http.StatusTooManyRequests,
	errs.ProviderUnavailable:          http.StatusBadGateway,
	errs.InstantUnavailable:           http.StatusUnprocessableEntity,
	errs.NotReversible:                http.StatusConflict,
	errs.AccountCheckFailed:           http.StatusUnprocessableEntity,
	errs.OwnershipMismatch:            http.StatusUnprocessableEntity,
	errs.RailUnavailable:              http.StatusServiceUnavailable,
	errs.Internal:                     http.StatusInternalServerError,
	errs.ServiceUnavailable:           http.StatusServiceUnavailable,
}

// Codes are every error code the service answers with, sorted.
func Codes() []errs.Code {
	return slices.Sorted(maps.Keys(statusOf))
}

// StatusOf is the HTTP status of a code; 500 for a code not in the table.
func StatusOf(code errs.Code) int {
	if st, ok := statusOf[code]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// serviceUnavailableRetry is the Retry-After of a 503: the database is
// usually back within seconds.
const serviceUnavailableRetry = 5

// internalMessage is all a caller learns of an error without a code.
const internalMessage = "An internal error occurred; it has been logged with this request id."

// Outcome is what an error means for an answer: every surface renders one,
// in its own form (the JSON envelope, a dashboard page, a hosted page).
type Outcome struct {
	Status  int
	Code    errs.Code
	Message string // safe to show; for an internal error, a generic one
	Param   string
	Details map[string]any
	// RetryAfter is the Retry-After header in seconds; 0 sends none.
	RetryAfter int
	// Level is how the error is logged; below Info it is not logged
	// (the access log line names its code).
	Level slog.Level
	// Gone: the client went away while the request ran; nobody reads an
	// answer, so none is written.
	Gone bool
}

// Classify turns any error into its outcome; ctx is the request's (a
// canceled one means the client went away). Errors without a contract code
// (and those with the internal_error code) are internal errors.
func Classify(ctx context.Context, err error) Outcome {
	e, ok := errs.As(err)
	status, known := 0, false
	if ok {
		status, known = statusOf[e.Code]
	}
	if !known || e.Code == errs.Internal {
		if ctx.Err() != nil {
			// The client went away, so the database work was cut off (the
			// error may be "context canceled", a rolled-back transaction or
			// a dropped connection): not a bug.
			return Outcome{Status: 499, Code: errs.Internal, Message: internalMessage, Level: slog.LevelInfo, Gone: true}
		}
		return Outcome{Status: http.StatusInternalServerError, Code: errs.Internal, Message: internalMessage, Level: slog.LevelError}
	}
	o := Outcome{Status: status, Code: e.Code, Message: e.Message, Param: e.Param, Details: e.Details, Level: slog.LevelDebug}
	if status >= 500 {
		o.Level = slog.LevelWarn
	}
	// A wait the error names (rate_limited, provider_unavailable) is sent
	// as Retry-After too; a 503 without one waits serviceUnavailableRetry.
	if ra, ok := e.Details[RetryAfterDetail].(string); ok {
		o.RetryAfter, _ = strconv.Atoi(ra)
	} else if e.Code == errs.ServiceUnavailable {
		o.RetryAfter = serviceUnavailableRetry
	}
	return o
}

// RetryAfterDetail is the detail of an error (rate_limited,
// provider_unavailable) that holds the wait in whole seconds (a string, as
// the API has always shown it); the answer's Retry-After repeats it.
const RetryAfterDetail = "retry_after"

// RetryAfter is a wait in whole seconds, rounded up, at least 1: the one
// rounding of every Retry-After the service sends.
func RetryAfter(wait time.Duration) int {
	return max(int((wait+time.Second-1)/time.Second), 1)
}

// RateLimited is the rate_limited error for a wait.
func RateLimited(message string, wait time.Duration) *errs.Error {
	return errs.New(errs.RateLimited, message).WithDetail(RetryAfterDetail, strconv.Itoa(RetryAfter(wait)))
}

// Resolve classifies err for the request, logs it at its level with the
// request id, sets Retry-After, and records its code for the access log.
// For a client that went away it aborts the chain; the caller writes
// nothing more.
func (k *Shared) Resolve(c *gin.Context, err error) Outcome {
	ctx := c.Request.Context()
	o := Classify(ctx, err)
	switch {
	case o.Gone:
		k.Log.InfoContext(ctx, "client went away", slog.String("request_id", RequestID(c)),
			slog.String("route", c.FullPath()), slog.Any("error", err))
		c.Abort()
		return o
	case o.Level >= slog.LevelError:
		k.Log.ErrorContext(ctx, "internal error", slog.String("request_id", RequestID(c)),
			slog.String("route", c.FullPath()), slog.Any("error", err))
	case o.Level >= slog.LevelWarn:
		k.Log.WarnContext(ctx, "request failed", slog.String("request_id", RequestID(c)),
			slog.String("code", string(o.Code)), slog.Any("error", err))
	}
	if o.RetryAfter > 0 {
		c.Header("Retry-After", strconv.Itoa(o.RetryAfter))
	}
	c.Set(ctxErrorCode, string(o.Code))
	return o
}

// errorEnvelope is the body of every JSON error response.
type errorEnvelope struct {
	Success bool           `json:"success"`
	Error   map[string]any `json:"error"`
}

// Fail writes the JSON error envelope for err and aborts the chain.
func (k *Shared) Fail(c *gin.Context, err error) {
	o := k.Resolve(c, err)
	if o.Gone {
		return
	}
	body := map[string]any{"code": o.Code, "message": o.Message, "request_id": RequestID(c)}
	if o.Param != "" {
		body["param"] = o.Param
	}
	for key, v := range o.Details {
		body[key] = v
	}
	c.Abort()
	// As c.JSON encodes it (json.Marshal: HTML escaped, no newline), in a
	// pooled buffer instead of a new slice.
	env := errorEnvelope{Success: false, Error: body}
	if !writePooled(func(buf *bytes.Buffer) bool {
		if json.NewEncoder(buf).Encode(env) != nil {
			return false
		}
		buf.Truncate(buf.Len() - 1)
		writeJSON(c, o.Status, buf.Bytes(), false)
		return true
	}) {
		c.JSON(o.Status, env) // Gin's way with what does not encode
	}
}
