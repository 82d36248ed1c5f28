package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/web/surface"
)

func (s *Surface) createPayment(c *gin.Context, svc Services) {
	var in payment.Input
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	p, err := svc.Payments.Create(c.Request.Context(), surface.Scope(c), in)
	surface.Reply(s.Shared, c, p, err)
}

func (s *Surface) getPayment(c *gin.Context, svc Services) {
	p, err := svc.Payments.Get(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, p, err)
}

// paymentEvidence is what a merchant shows its bank for a disputed debit.
func (s *Surface) paymentEvidence(c *gin.Context, _ Services) {
	ev, err := s.Evidence.Of(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, ev, err)
}

// balances is the money in flight and at risk of the key's environment.
func (s *Surface) balances(c *gin.Context, svc Services) {
	b, err := svc.Payments.Balances(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, b, err)
}

func (s *Surface) listPayments(c *gin.Context, svc Services) {
	surface.List(s.Shared, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]payment.Payment, bool, error) {
		return svc.Payments.Search(ctx, sc, payment.Filter{SourceID: c.Query("funding_source_id"), Metadata: c.QueryMap("metadata")}, p)
	})
}

func (s *Surface) updatePayment(c *gin.Context, svc Services) {
	var in payment.UpdateInput
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	p, err := svc.Payments.Update(c.Request.Context(), surface.Scope(c), c.Param("id"), in)
	surface.Reply(s.Shared, c, p, err)
}

func (s *Surface) refundPayment(c *gin.Context, svc Services) {
	var in payment.RefundInput
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	p, err := svc.Payments.Refund(c.Request.Context(), surface.Scope(c), c.Param("id"), in)
	surface.Reply(s.Shared, c, p, err)
}

func (s *Surface) createSubscription(c *gin.Context, svc Services) {
	var in payment.SubscriptionInput
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	sub, err := svc.Payments.Subscribe(c.Request.Context(), surface.Scope(c), in)
	surface.Reply(s.Shared, c, sub, err)
}

func (s *Surface) getSubscription(c *gin.Context, svc Services) {
	sub, err := svc.Payments.GetSubscription(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, sub, err)
}

func (s *Surface) cancelSubscription(c *gin.Context, svc Services) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	sub, err := svc.Payments.CancelSubscription(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, sub, err)
}

func (s *Surface) listSubscriptions(c *gin.Context, svc Services) {
	surface.List(s.Shared, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]payment.Subscription, bool, error) {
		return svc.Payments.ListSubscriptions(ctx, sc, c.Query("funding_source_id"), p)
	})
}

func (s *Surface) cancelPayment(c *gin.Context, svc Services) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	p, err := svc.Payments.Cancel(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, p, err)
}

func (s *Surface) retryPayment(c *gin.Context, svc Services) {
	if err := surface.DecodeNone(c); err != nil {
		s.Fail(c, err)
		return
	}
	p, err := svc.Payments.Retry(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, p, err)
}

func (s *Surface) reversePayment(c *gin.Context, svc Services) {
	var in payment.ReverseInput
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	p, err := svc.Payments.Reverse(c.Request.Context(), surface.Scope(c), c.Param("id"), in)
	surface.Reply(s.Shared, c, p, err)
}

func (s *Surface) updateSubscription(c *gin.Context, svc Services) {
	var in payment.UpdateInput
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	sub, err := svc.Payments.UpdateSubscription(c.Request.Context(), surface.Scope(c), c.Param("id"), in)
	surface.Reply(s.Shared, c, sub, err)
}
