package api

import (
	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/web/surface"
)

// getOriginator shows the merchant its environment's originator, with
// today's usage and its return rates.
func (s *Surface) getOriginator(c *gin.Context, _ Services) {
	if s.Originators == nil {
		s.Fail(c, errs.New(errs.NotFound, "This merchant environment has no originator."))
		return
	}
	o, err := s.Originators.Get(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, o, err)
}
