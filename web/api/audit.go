package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/web/surface"
)

// listAuditEvents is the security log of the key's environment, with the
// events of the account as a whole, newest first.
func (s *Surface) listAuditEvents(c *gin.Context, _ Services) {
	surface.List(s.Shared, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]audit.Event, bool, error) {
		return s.Audit.List(ctx, sc, p)
	})
}
