package web

import (
	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/customer"
)

func (s *server) createCustomer(c *gin.Context) {
	var in customer.Input
	if err := decode(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	cus, err := s.customers.Create(c.Request.Context(), scope(c), in)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, cus)
}

func (s *server) getCustomer(c *gin.Context) {
	cus, err := s.customers.Get(c.Request.Context(), scope(c), c.Param("user_id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, cus)
}

func (s *server) listCustomers(c *gin.Context) {
	list(s, c, s.customers.List)
}
