package api

import (
	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/web/kit"
)

func (s *Surface) createCustomer(c *gin.Context) {
	var in customer.Input
	if err := kit.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	cus, err := s.Customers.Create(c.Request.Context(), kit.Scope(c), in)
	kit.Reply(s.Kit, c, cus, err)
}

func (s *Surface) getCustomer(c *gin.Context) {
	cus, err := s.Customers.Get(c.Request.Context(), kit.Scope(c), c.Param("user_id"))
	kit.Reply(s.Kit, c, cus, err)
}

func (s *Surface) listCustomers(c *gin.Context) {
	kit.List(s.Kit, c, s.Customers.List)
}

func (s *Surface) updateCustomer(c *gin.Context) {
	var in customer.Update
	if err := kit.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	cus, err := s.Customers.Update(c.Request.Context(), kit.Scope(c), c.Param("user_id"), in)
	kit.Reply(s.Kit, c, cus, err)
}
