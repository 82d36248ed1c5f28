package api

import (
	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/web/surface"
)

// The sandbox's simulations (/v2/sandbox/…) force what a bank or time would
// do: returns, expiries, a subscription's next debit. Each goes through the
// same service code, and so fires the same events, as the real path. They
// take a sandbox key; a production key gets 403 permission_denied.

// sandboxOnly refuses production keys on the simulation routes (the
// services refuse them too).
func (s *Surface) sandboxOnly(c *gin.Context) {
	if err := tenant.SandboxOnly(surface.Scope(c)); err != nil {
		s.Fail(c, err)
		c.Abort()
		return
	}
	c.Next()
}

// returnCode is the body of a simulated return.
type returnCode struct {
	Code string `json:"code"`
}

func (s *Surface) decodeReturnCode(c *gin.Context) (string, bool) {
	var in returnCode
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return "", false
	}
	if in.Code == "" {
		s.Fail(c, errs.Invalid("code", `code is required: an ACH return code like "R03"`))
		return "", false
	}
	return in.Code, true
}

func (s *Surface) simulateDepositReturn(c *gin.Context, svc Services) {
	code, ok := s.decodeReturnCode(c)
	if !ok {
		return
	}
	src, err := svc.Consequences.SimulateDepositReturn(c.Request.Context(), surface.Scope(c), c.Param("funding_source_id"), code)
	surface.Reply(s.Shared, c, src, err)
}

func (s *Surface) simulateDepositExpiry(c *gin.Context, svc Services) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	src, err := svc.Funding.SimulateDepositExpiry(c.Request.Context(), surface.Scope(c), c.Param("funding_source_id"))
	surface.Reply(s.Shared, c, src, err)
}

func (s *Surface) simulateChange(c *gin.Context, svc Services) {
	var in funding.Correction
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	src, err := svc.Funding.SimulateChange(c.Request.Context(), surface.Scope(c), c.Param("funding_source_id"), in)
	surface.Reply(s.Shared, c, src, err)
}

func (s *Surface) simulatePaymentReturn(c *gin.Context, svc Services) {
	code, ok := s.decodeReturnCode(c)
	if !ok {
		return
	}
	p, err := svc.Consequences.SimulateReturn(c.Request.Context(), surface.Scope(c), c.Param("id"), code)
	surface.Reply(s.Shared, c, p, err)
}

func (s *Surface) advanceSubscription(c *gin.Context, svc Services) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	p, err := svc.Payments.Advance(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, p, err)
}
