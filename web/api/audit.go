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
// events of the account as a whole, newest first. A sandbox key, often
// in more hands than the account's owner, sees account-wide events
// (dashboard sign-ins, password changes) without the addresses they came
// from; a production key and the dashboard show them.
func (s *Surface) listAuditEvents(c *gin.Context, _ Services) {
	surface.List(s.Shared, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]audit.Event, bool, error) {
		evs, more, err := s.Audit.List(ctx, sc, p)
		if sc.Env != tenant.Production {
			for i := range evs {
				evs[i].IPHidden = evs[i].Env == ""
			}
		}
		return evs, more, err
	})
}
