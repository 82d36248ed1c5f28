package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/web/surface"
)

func (s *Surface) registerWebhook(c *gin.Context) {
	var in struct {
		URL string `json:"url"`
	}
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	if in.URL == "" {
		s.Fail(c, errs.Invalid("url", "url is required"))
		return
	}
	reg, err := s.Webhooks.Register(c.Request.Context(), surface.Scope(c), in.URL)
	surface.Reply(s.Shared, c, reg, err)
}

func (s *Surface) getWebhook(c *gin.Context) {
	reg, err := s.Webhooks.Get(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, reg, err)
}

func (s *Surface) deleteWebhook(c *gin.Context) {
	err := s.Webhooks.Delete(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, struct {
		Deleted bool `json:"deleted"`
	}{true}, err)
}

func (s *Surface) rollWebhookSecret(c *gin.Context) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	reg, err := s.Webhooks.RollSecret(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, reg, err)
}

func (s *Surface) testWebhook(c *gin.Context) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	ev, err := s.Webhooks.SendTest(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, ev, err)
}

func (s *Surface) listEvents(c *gin.Context) {
	surface.List(s.Shared, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]event.Event, bool, error) {
		return s.Webhooks.Events(ctx, sc, c.Query("type"), p)
	})
}

func (s *Surface) getEvent(c *gin.Context) {
	ev, err := s.Webhooks.Event(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, ev, err)
}

func (s *Surface) redeliverEvent(c *gin.Context) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	ev, err := s.Webhooks.Redeliver(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, ev, err)
}

func (s *Surface) enableWebhook(c *gin.Context) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	reg, err := s.Webhooks.Enable(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, reg, err)
}
