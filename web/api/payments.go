package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/idempotency"
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
	s.replyPayment(c, svc, p, err)
}

// replyPayment answers a new payment p (a creation's or a refund's).
// An instant credit is sent once the transaction that wrote its intent
// committed: at once when p was created on the pool's services, and by
// onceSend when it was created on an idempotent request's transaction.
func (s *Surface) replyPayment(c *gin.Context, svc Services, p payment.Payment, err error) {
	if err == nil && p.PendingInstant != nil {
		ic := *p.PendingInstant
		send := func(c *gin.Context) {
			p, err := s.Services.Consequences.DeliverInstant(c.Request.Context(), ic)
			surface.Reply(s.Shared, c, p, err)
		}
		if svc.Payments == s.Services.Payments {
			send(c)
			return
		}
		c.Set(pendingSendKey, send)
	}
	surface.Reply(s.Shared, c, p, err)
}

// pendingSendKey holds, in a request's context, the network send whose
// intent its handler wrote on the request's transaction and left to make:
// a func(*gin.Context) that sends on the pool's services and answers.
const pendingSendKey = "fundsource.pending_send"

// onceSend is once for a POST whose handler may write the intent of a
// network send (an instant credit: a payout or a verification's) instead
// of making it: under an Idempotency-Key the intent is written with the
// key's answer in the request's transaction, which commits before
// anything leaves (no network call inside a transaction, and no send a
// rollback would forget); the send is then made on the pool's services
// and the key's answer becomes the one the request gives (a 5xx forgets
// the key).
func (s *Surface) onceSend(h handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, ok := s.idempotencyRequest(c)
		switch {
		case !ok:
		case req == nil:
			h(c, s.Services)
		default:
			before := c.Writer.Header().Clone()
			var resp idempotency.Response
			replay, err := s.Idempotency.Idempotent(c.Request.Context(), *req, func(tx Services) (idempotency.Response, bool) {
				resp = buffered(c, func() { h(c, tx) })
				return resp, resp.Status < 500
			})
			if v, pending := c.Get(pendingSendKey); pending && err == nil && replay == nil {
				resp = buffered(c, func() { v.(func(*gin.Context))(c) })
				err = s.Idempotency.Replace(c.Request.Context(), *req, resp)
			}
			s.answerIdempotent(c, before, resp, replay, err)
		}
	}
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

// balances is the money in flight and at risk of the key's environment,
// of the wall clock or of the test clock the request reads (clockQuery).
func (s *Surface) balances(c *gin.Context, svc Services) {
	b, err := svc.Payments.Balances(c.Request.Context(), surface.Scope(c))
	surface.Reply(s.Shared, c, b, err)
}

func (s *Surface) listPayments(c *gin.Context, svc Services) {
	surface.List(s.Shared, c, func(ctx context.Context, sc tenant.Scope, p paging.Page) ([]payment.Payment, bool, error) {
		return svc.Payments.Search(ctx, sc, payment.Filter{SourceID: c.Query("funding_source_id"), Rail: c.Query("rail"),
			Method: c.Query("method"), Metadata: c.QueryMap("metadata")}, p)
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
	s.replyPayment(c, svc, p, err)
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
