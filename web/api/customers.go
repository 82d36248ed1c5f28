package api

import (
	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/web/surface"
)

func (s *Surface) createCustomer(c *gin.Context, svc Services) {
	var in customer.Input
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	ctx := c.Request.Context()
	if in.TestClock != nil && svc.TestClocks != nil {
		// The customer is created on its clock, at the clock's time; an
		// unknown clock or a production key is the customer service's to
		// refuse (it finds no clock in the context).
		k, err := svc.TestClocks.Get(ctx, surface.Scope(c), *in.TestClock)
		switch {
		case err == nil:
			ctx = k.Context(ctx)
		case !errs.Is(err, errs.TestClockNotFound) && !errs.Is(err, errs.PermissionDenied):
			s.Fail(c, err)
			return
		}
	}
	cus, err := svc.Customers.Create(ctx, surface.Scope(c), in)
	surface.Reply(s.Shared, c, cus, err)
}

func (s *Surface) getCustomer(c *gin.Context, svc Services) {
	cus, err := svc.Customers.Get(c.Request.Context(), surface.Scope(c), c.Param("user_id"))
	surface.Reply(s.Shared, c, cus, err)
}

func (s *Surface) listCustomers(c *gin.Context, svc Services) {
	surface.List(s.Shared, c, svc.Customers.List)
}

func (s *Surface) updateCustomer(c *gin.Context, svc Services) {
	var in customer.Update
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	cus, err := svc.Customers.Update(c.Request.Context(), surface.Scope(c), c.Param("user_id"), in)
	surface.Reply(s.Shared, c, cus, err)
}
