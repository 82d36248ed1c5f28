package api

import (
	"bytes"
	"context"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/web/surface"
)

func (s *Surface) getMandate(c *gin.Context, svc Services) {
	m, err := svc.Payments.GetMandate(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, m, err)
}

func (s *Surface) listMandates(c *gin.Context, svc Services) {
	surface.List(s.Shared, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]payment.Mandate, bool, error) {
		return svc.Payments.ListMandates(ctx, sc, c.Query("funding_source_id"), p)
	})
}

func (s *Surface) revokeMandate(c *gin.Context, svc Services) {
	// The body is optional: an empty one revokes with the default reason.
	var in payment.RevokeInput
	if len(bytes.TrimSpace(surface.Body(c))) > 0 {
		if err := surface.Decode(c, &in); err != nil {
			s.Fail(c, err)
			return
		}
	}
	m, err := svc.Payments.Revoke(c.Request.Context(), surface.Scope(c), c.Param("id"), in, surface.Actor(c))
	surface.Reply(s.Shared, c, m, err)
}

// returnRates answers the environment's debit return rates against
// NACHA's thresholds.
func (s *Surface) returnRates(c *gin.Context, svc Services) {
	r, err := svc.Payments.ReturnRates(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, r, err)
}

// monitoring answers the environment's fraud-monitoring report: rules and
// thresholds, alerts by rule, held payments and the last annual review.
func (s *Surface) monitoring(c *gin.Context, svc Services) {
	m, err := svc.Payments.Monitoring(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, m, err)
}
