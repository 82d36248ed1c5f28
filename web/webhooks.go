package web

import (
	"bytes"
	"context"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/event"
	"github.com/fundsource/fundsource/internal/paging"
	"github.com/fundsource/fundsource/internal/tenant"
)

// decodeNone accepts an empty body or an empty JSON object, for POSTs
// that take no parameters.
func decodeNone(c *gin.Context) error {
	body, _ := c.Get(ctxBody)
	if raw, _ := body.([]byte); len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var none struct{}
	return decode(c, &none)
}

func (s *server) registerWebhook(c *gin.Context) {
	var in struct {
		URL string `json:"url"`
	}
	if err := decode(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	if in.URL == "" {
		s.fail(c, errs.Invalid("url", "url is required"))
		return
	}
	reg, err := s.webhooks.Register(c.Request.Context(), scope(c), in.URL)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, reg)
}

func (s *server) getWebhook(c *gin.Context) {
	reg, err := s.webhooks.Get(c.Request.Context(), scope(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, reg)
}

func (s *server) deleteWebhook(c *gin.Context) {
	if err := s.webhooks.Delete(c.Request.Context(), scope(c)); err != nil {
		s.fail(c, err)
		return
	}
	ok(c, struct {
		Deleted bool `json:"deleted"`
	}{true})
}

func (s *server) rollWebhookSecret(c *gin.Context) {
	if err := decodeNone(c); err != nil {
		s.fail(c, err)
		return
	}
	reg, err := s.webhooks.RollSecret(c.Request.Context(), scope(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, reg)
}

func (s *server) testWebhook(c *gin.Context) {
	if err := decodeNone(c); err != nil {
		s.fail(c, err)
		return
	}
	ev, err := s.webhooks.SendTest(c.Request.Context(), scope(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, ev)
}

func (s *server) listEvents(c *gin.Context) {
	list(s, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]event.Event, bool, error) {
		return s.webhooks.Events(ctx, sc, c.Query("type"), p)
	})
}

func (s *server) getEvent(c *gin.Context) {
	ev, err := s.webhooks.Event(c.Request.Context(), scope(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, ev)
}

func (s *server) redeliverEvent(c *gin.Context) {
	if err := decodeNone(c); err != nil {
		s.fail(c, err)
		return
	}
	ev, err := s.webhooks.Redeliver(c.Request.Context(), scope(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, ev)
}
