package web

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/paging"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/tenant"
)

func (s *server) createPayment(c *gin.Context) {
	var in payment.Input
	if err := decode(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.payments.Create(c.Request.Context(), scope(c), in)
	reply(s, c, p, err)
}

func (s *server) getPayment(c *gin.Context) {
	p, err := s.payments.Get(c.Request.Context(), scope(c), c.Param("id"))
	reply(s, c, p, err)
}

func (s *server) listPayments(c *gin.Context) {
	list(s, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]payment.Payment, bool, error) {
		return s.payments.List(ctx, sc, c.Query("funding_source_id"), p)
	})
}

func (s *server) createSubscription(c *gin.Context) {
	var in payment.SubscriptionInput
	if err := decode(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	sub, err := s.payments.Subscribe(c.Request.Context(), scope(c), in)
	reply(s, c, sub, err)
}

func (s *server) getSubscription(c *gin.Context) {
	sub, err := s.payments.GetSubscription(c.Request.Context(), scope(c), c.Param("id"))
	reply(s, c, sub, err)
}

func (s *server) cancelSubscription(c *gin.Context) {
	if err := decodeNone(c); err != nil {
		s.fail(c, err)
		return
	}
	sub, err := s.payments.CancelSubscription(c.Request.Context(), scope(c), c.Param("id"))
	reply(s, c, sub, err)
}

func (s *server) listSubscriptions(c *gin.Context) {
	list(s, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]payment.Subscription, bool, error) {
		return s.payments.ListSubscriptions(ctx, sc, c.Query("funding_source_id"), p)
	})
}
