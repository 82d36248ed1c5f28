package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/paging"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/tenant"
	"github.com/fundsource/fundsource/web/kit"
)

func (s *Surface) createPayment(c *gin.Context) {
	var in payment.Input
	if err := kit.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	p, err := s.Payments.Create(c.Request.Context(), kit.Scope(c), in)
	kit.Reply(s.Kit, c, p, err)
}

func (s *Surface) getPayment(c *gin.Context) {
	p, err := s.Payments.Get(c.Request.Context(), kit.Scope(c), c.Param("id"))
	kit.Reply(s.Kit, c, p, err)
}

func (s *Surface) listPayments(c *gin.Context) {
	kit.List(s.Kit, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]payment.Payment, bool, error) {
		return s.Payments.List(ctx, sc, c.Query("funding_source_id"), p)
	})
}

func (s *Surface) createSubscription(c *gin.Context) {
	var in payment.SubscriptionInput
	if err := kit.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	sub, err := s.Payments.Subscribe(c.Request.Context(), kit.Scope(c), in)
	kit.Reply(s.Kit, c, sub, err)
}

func (s *Surface) getSubscription(c *gin.Context) {
	sub, err := s.Payments.GetSubscription(c.Request.Context(), kit.Scope(c), c.Param("id"))
	kit.Reply(s.Kit, c, sub, err)
}

func (s *Surface) cancelSubscription(c *gin.Context) {
	if err := kit.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	sub, err := s.Payments.CancelSubscription(c.Request.Context(), kit.Scope(c), c.Param("id"))
	kit.Reply(s.Kit, c, sub, err)
}

func (s *Surface) listSubscriptions(c *gin.Context) {
	kit.List(s.Kit, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]payment.Subscription, bool, error) {
		return s.Payments.ListSubscriptions(ctx, sc, c.Query("funding_source_id"), p)
	})
}

func (s *Surface) cancelPayment(c *gin.Context) {
	if err := kit.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	p, err := s.Payments.Cancel(c.Request.Context(), kit.Scope(c), c.Param("id"))
	kit.Reply(s.Kit, c, p, err)
}
