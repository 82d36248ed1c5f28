package web

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/errs"
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
	errs.Internal:                     http.StatusInternalServerError,
	errs.ServiceUnavailable:           http.StatusServiceUnavailable,
}

// errorBody is the error member of the envelope. Details are merged in.
type errorBody map[string]any

// errorEnvelope is the body of every error response.
type errorEnvelope struct {
	Success bool      `json:"success"`
	Error   errorBody `json:"error"`
}

// fail writes the error envelope for err and aborts the chain. Errors without
// a contract code are logged with the request id and shown as internal_error.
func (s *server) fail(c *gin.Context, err error) {
	e, ok := errs.As(err)
	status, known := 0, false
	if ok {
		status, known = statusOf[e.Code]
	}
	if !known {
		if s.clientGone(c, err) {
			return
		}
		s.log.ErrorContext(c.Request.Context(), "internal error",
			slog.String("request_id", requestID(c)), slog.String("route", c.FullPath()), slog.Any("error", err))
		e = errs.New(errs.Internal, "An internal error occurred; it has been logged with this request id.")
		status = http.StatusInternalServerError
	} else if status >= 500 {
		s.log.WarnContext(c.Request.Context(), "request failed",
			slog.String("request_id", requestID(c)), slog.String("code", string(e.Code)), slog.Any("error", err))
	}
	body := errorBody{"code": e.Code, "message": e.Message, "request_id": requestID(c)}
	if e.Param != "" {
		body["param"] = e.Param
	}
	for k, v := range e.Details {
		body[k] = v
	}
	switch e.Code {
	case errs.ServiceUnavailable:
		c.Header("Retry-After", "5")
	case errs.RateLimited:
		if ra, ok := e.Details["retry_after"]; ok {
			c.Header("Retry-After", fmt.Sprint(ra))
		}
	}
	c.Set(ctxErrorCode, string(e.Code))
	c.AbortWithStatusJSON(status, errorEnvelope{Success: false, Error: body})
}

// clientGone reports (and handles) a request whose client went away: its
// context was canceled, so the database work was cut off (the error may be
// "context canceled", a rolled-back transaction or a dropped connection).
// Nobody reads an answer; it is logged at info level, not as a bug.
func (s *server) clientGone(c *gin.Context, err error) bool {
	if c.Request.Context().Err() == nil {
		return false
	}
	s.log.InfoContext(c.Request.Context(), "client went away", slog.String("request_id", requestID(c)),
		slog.String("route", c.FullPath()), slog.Any("error", err))
	c.Abort()
	return true
}
