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

func (s *Surface) registerWebhook(c *gin.Context, svc Services) {
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
	reg, err := svc.Webhooks.Register(c.Request.Context(), surface.Scope(c), in.URL, surface.Actor(c))
	surface.Reply(s.Shared, c, reg, err)
}

func (s *Surface) getWebhook(c *gin.Context, svc Services) {
	reg, err := svc.Webhooks.Get(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, reg, err)
}

func (s *Surface) deleteWebhook(c *gin.Context, svc Services) {
	err := svc.Webhooks.Delete(c.Request.Context(), surface.Scope(c), surface.Actor(c))
	surface.Reply(s.Shared, c, struct {
		Deleted bool `json:"deleted"`
	}{true}, err)
}

func (s *Surface) rollWebhookSecret(c *gin.Context, svc Services) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	reg, err := svc.Webhooks.RollSecret(c.Request.Context(), surface.Scope(c), surface.Actor(c))
	surface.Reply(s.Shared, c, reg, err)
}

func (s *Surface) testWebhook(c *gin.Context, svc Services) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	ev, err := svc.Webhooks.SendTest(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, ev, err)
}

func (s *Surface) listEvents(c *gin.Context, svc Services) {
	surface.List(s.Shared, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]event.Event, bool, error) {
		return svc.Webhooks.Events(ctx, sc, c.Query("type"), p)
	})
}

func (s *Surface) getEvent(c *gin.Context, svc Services) {
	ev, err := svc.Webhooks.Event(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, ev, err)
}

func (s *Surface) redeliverEvent(c *gin.Context, svc Services) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	ev, err := svc.Webhooks.Redeliver(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, ev, err)
}

func (s *Surface) enableWebhook(c *gin.Context, svc Services) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	reg, err := svc.Webhooks.Enable(c.Request.Context(), surface.Scope(c), surface.Actor(c))
	surface.Reply(s.Shared, c, reg, err)
}
