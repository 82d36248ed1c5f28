package api

import (
	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/web/surface"
)

func (s *Surface) createCustomer(c *gin.Context) {
	var in customer.Input
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	cus, err := s.Customers.Create(c.Request.Context(), surface.Scope(c), in)
	surface.Reply(s.Shared, c, cus, err)
}

func (s *Surface) getCustomer(c *gin.Context) {
	cus, err := s.Customers.Get(c.Request.Context(), surface.Scope(c), c.Param("user_id"))
	surface.Reply(s.Shared, c, cus, err)
}

func (s *Surface) listCustomers(c *gin.Context) {
	surface.List(s.Shared, c, s.Customers.List)
}

func (s *Surface) updateCustomer(c *gin.Context) {
	var in customer.Update
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	cus, err := s.Customers.Update(c.Request.Context(), surface.Scope(c), c.Param("user_id"), in)
	surface.Reply(s.Shared, c, cus, err)
}
