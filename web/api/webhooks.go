package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/event"
	"github.com/fundsource/fundsource/internal/paging"
	"github.com/fundsource/fundsource/internal/tenant"
	"github.com/fundsource/fundsource/web/kit"
)

func (s *Surface) registerWebhook(c *gin.Context) {
	var in struct {
		URL string `json:"url"`
	}
	if err := kit.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	if in.URL == "" {
		s.Fail(c, errs.Invalid("url", "url is required"))
		return
	}
	reg, err := s.Webhooks.Register(c.Request.Context(), kit.Scope(c), in.URL)
	kit.Reply(s.Kit, c, reg, err)
}

func (s *Surface) getWebhook(c *gin.Context) {
	reg, err := s.Webhooks.Get(c.Request.Context(), kit.Scope(c))
	kit.Reply(s.Kit, c, reg, err)
}

func (s *Surface) deleteWebhook(c *gin.Context) {
	err := s.Webhooks.Delete(c.Request.Context(), kit.Scope(c))
	kit.Reply(s.Kit, c, struct {
		Deleted bool `json:"deleted"`
	}{true}, err)
}

func (s *Surface) rollWebhookSecret(c *gin.Context) {
	if err := kit.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	reg, err := s.Webhooks.RollSecret(c.Request.Context(), kit.Scope(c))
	kit.Reply(s.Kit, c, reg, err)
}

func (s *Surface) testWebhook(c *gin.Context) {
	if err := kit.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	ev, err := s.Webhooks.SendTest(c.Request.Context(), kit.Scope(c))
	kit.Reply(s.Kit, c, ev, err)
}

func (s *Surface) listEvents(c *gin.Context) {
	kit.List(s.Kit, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]event.Event, bool, error) {
		return s.Webhooks.Events(ctx, sc, c.Query("type"), p)
	})
}

func (s *Surface) getEvent(c *gin.Context) {
	ev, err := s.Webhooks.Event(c.Request.Context(), kit.Scope(c), c.Param("id"))
	kit.Reply(s.Kit, c, ev, err)
}

func (s *Surface) redeliverEvent(c *gin.Context) {
	if err := kit.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	ev, err := s.Webhooks.Redeliver(c.Request.Context(), kit.Scope(c), c.Param("id"))
	kit.Reply(s.Kit, c, ev, err)
}

func (s *Surface) enableWebhook(c *gin.Context) {
	if err := kit.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	reg, err := s.Webhooks.Enable(c.Request.Context(), kit.Scope(c))
	kit.Reply(s.Kit, c, reg, err)
}
