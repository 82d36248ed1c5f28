package api

import (
	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/web/surface"
)

func (s *Surface) createCustomer(c *gin.Context, svc Services) {
	var in customer.Input
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	cus, err := svc.Customers.Create(c.Request.Context(), surface.Scope(c), in)
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
