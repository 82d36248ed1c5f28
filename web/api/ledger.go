package api

import (
	"context"
	"mime"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/web/surface"
)

// listBalanceTransactions pages the merchant environment's ledger, of the
// wall clock or of the test clock the request reads (clockQuery).
func (s *Surface) listBalanceTransactions(c *gin.Context, svc Services) {
	surface.List(s.Shared, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]payment.BalanceTransaction, bool, error) {
		return svc.Payments.BalanceTransactions(ctx, sc, p)
	})
}

// settlementsReport answers a day's settled payments as JSON, or as CSV
// when the request accepts text/csv before JSON.
func (s *Surface) settlementsReport(c *gin.Context, svc Services) {
	r, err := svc.Payments.SettlementReport(c.Request.Context(), surface.Scope(c), c.Query("date"))
	if err != nil || !WantsCSV(c.GetHeader("Accept")) {
		surface.Reply(s.Shared, c, r, err)
		return
	}
	if err := surface.SettlementsCSV(c, r); err != nil {
		s.Fail(c, err)
	}
}

// WantsCSV reports whether an Accept header names text/csv (and not JSON
// first).
func WantsCSV(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "text/csv":
			return true
		case "application/json":
			return false
		}
	}
	return false
}
