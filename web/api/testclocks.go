package api

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
	core "github.com/fundsource/fundsource/internal/core/testclock"
	"github.com/fundsource/fundsource/internal/testclock"
	"github.com/fundsource/fundsource/web/surface"
)

// Sandbox test clocks (/v2/sandbox/test-clocks), the clock a request
// about an object on one runs on (onClock), and the clock whose money a
// read of the balances or the ledger is about (clockQuery).

func (s *Surface) createTestClock(c *gin.Context, svc Services) {
	var in testclock.Input
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	k, err := svc.TestClocks.Create(c.Request.Context(), surface.Scope(c), in)
	surface.Reply(s.Shared, c, k, err)
}

func (s *Surface) listTestClocks(c *gin.Context, svc Services) {
	surface.List(s.Shared, c, svc.TestClocks.List)
}

func (s *Surface) getTestClock(c *gin.Context, svc Services) {
	k, err := svc.TestClocks.Get(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, k, err)
}

func (s *Surface) advanceTestClock(c *gin.Context, svc Services) {
	var in testclock.AdvanceInput
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	k, err := svc.TestClocks.Advance(c.Request.Context(), surface.Scope(c), c.Param("id"), in)
	surface.Reply(s.Shared, c, k, err)
}

func (s *Surface) deleteTestClock(c *gin.Context, svc Services) {
	k, err := svc.TestClocks.Delete(c.Request.Context(), surface.Scope(c), c.Param("id"))
	surface.Reply(s.Shared, c, struct {
		ID      string `json:"test_clock_id"`
		Deleted bool   `json:"deleted"`
	}{k.ID, true}, err)
}

// clockFields are the members of a request body that name an object whose
// clock the request runs on. Other members, and a body that does not read,
// are the handler's to refuse.
type clockFields struct {
	UserID          string `json:"user_id"`
	CustomerID      string `json:"customer_id"`
	FundingSourceID string `json:"funding_source_id"`
	MandateID       string `json:"mandate_id"`
}

// onClock runs a sandbox request about objects on a test clock on that
// clock, at its frozen time: the objects its path parameters and body
// (clockFields) name. A merchant environment without clocks (its key
// says so, read with the key and cached with it) costs nothing more; one
// with clocks costs one indexed query. While the clock advances, its
// objects may be read, and a write about them answers conflict: the
// advance is running their due work on the clock's time.
func (s *Surface) onClock(c *gin.Context) {
	p := surface.Principal(c)
	if !p.HasTestClocks || p.Scope.Env != tenant.Sandbox || s.Services.TestClocks == nil {
		c.Next()
		return
	}
	var o testclock.Objects
	for _, prm := range c.Params {
		o.Add(prm.Value)
	}
	o.Add(c.Query("funding_source_id")) // a list of one source's payments, subscriptions, mandates
	if body := surface.Body(c); len(body) > 0 {
		var f clockFields
		_ = json.Unmarshal(body, &f) // what does not read is the handler's to refuse
		for _, id := range []string{f.UserID, f.CustomerID, f.FundingSourceID, f.MandateID} {
			o.Add(id)
		}
	}
	r, ok, err := s.Services.TestClocks.Resolve(c.Request.Context(), p.Scope, o)
	if err != nil {
		s.Fail(c, err)
		return
	}
	if !ok {
		c.Next()
		return
	}
	if r.Status != testclock.Ready && c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead {
		s.Fail(c, errs.New(errs.Conflict, "The test clock of this request's objects is advancing; retry once its status is ready."))
		return
	}
	c.Request = c.Request.WithContext(core.With(c.Request.Context(), r.Clock))
	c.Next()
}

// clockQuery runs a read of the merchant's money (balances, the ledger) on
// the test clock its test_clock query parameter names, at the clock's
// frozen time: the money of that clock's customers, judged on its day.
// Without the parameter the read stays on the wall clock, which leaves
// every clock's customers out. Sandbox keys only (permission_denied); a
// value that is not one clock id is invalid_request, a clock the merchant
// environment does not have test_clock_not_found.
func (s *Surface) clockQuery(c *gin.Context) {
	vs, ok := c.GetQueryArray("test_clock")
	if !ok {
		c.Next()
		return
	}
	scope := surface.Scope(c)
	if err := tenant.SandboxOnly(scope); err != nil {
		s.Fail(c, err)
		return
	}
	if len(vs) != 1 || !ids.Valid(testclock.Prefix, vs[0]) {
		s.Fail(c, errs.Invalid("test_clock", "test_clock must be one test clock id (clk_…)."))
		return
	}
	if s.Services.TestClocks == nil {
		s.Fail(c, testclock.NotFound("test_clock"))
		return
	}
	k, err := s.Services.TestClocks.Get(c.Request.Context(), scope, vs[0])
	if errs.Is(err, errs.TestClockNotFound) {
		err = testclock.NotFound("test_clock")
	}
	if err != nil {
		s.Fail(c, err)
		return
	}
	c.Request = c.Request.WithContext(k.Context(c.Request.Context()))
	c.Next()
}
