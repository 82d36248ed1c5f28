package dashboard

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/customer"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/sanctions"
	"github.com/fundsource/fundsource/templates/components"
	view "github.com/fundsource/fundsource/templates/dashboard"
)

// listSize is how many rows a page of a dashboard list shows.
const listSize = 25

// statusOptions are the funding-source list's status filter.
var statusOptions = []view.Option{
	{Value: funding.FilterLive, Label: "All (not removed)"},
	{Value: funding.FilterUnverified, Label: "Unverified"},
	{Value: funding.FilterPending, Label: view.PendingLabel},
	{Value: funding.FilterVerified, Label: "Verified"},
	{Value: funding.FilterRemoved, Label: "Removed"},
}

func (s *Surface) customersPage(c *gin.Context) {
	q := c.Query("q")
	list, more, err := s.customers.Search(c.Request.Context(), current(c).Scope, q, pageOf(c, listSize))
	if err != nil {
		s.Fail(c, err)
		return
	}
	clocks := make([]string, len(list))
	for i, cu := range list {
		clocks[i] = cu.TestClock
	}
	marks, err := s.clockMarks(c.Request.Context(), current(c).Scope, clocks)
	if err != nil {
		s.Fail(c, err)
		return
	}
	v := view.Customers{Query: q}
	v.Rows, v.Page = rowsOf(c, list, more, func(cu customer.Customer) view.CustomerRow {
		r := customerRow(cu)
		r.Clock = marks[cu.TestClock]
		return r
	}, func(cu customer.Customer) string { return cu.ID })
	s.Page(c, http.StatusOK, view.CustomersPage(s.frame(c, "Customers", "customers"), v))
}

func customerRow(cu customer.Customer) view.CustomerRow {
	return view.CustomerRow{ID: cu.ID, Name: cu.FirstName + " " + cu.LastName, Email: cu.Email, Created: shortTime(cu.CreatedAt),
		Sanctions: cu.Screening.Status == sanctions.PotentialMatch, Cleared: cu.Screening.Status == sanctions.Cleared,
		Matched: cu.Screening.Listed}
}

// customerShown bounds the payments and subscriptions a customer's page lists.
const customerShown = 25

// addCustomerActivity adds the customer's newest payments and
// subscriptions, across its sources, to its page; each names the
// customer's clock (v.Clock).
func (s *Surface) addCustomerActivity(c *gin.Context, v *view.Customer) error {
	ctx, scope := c.Request.Context(), current(c).Scope
	pays, more, err := s.payments.Search(ctx, scope, payment.Filter{CustomerID: v.ID}, paging.Page{Limit: customerShown})
	if err != nil {
		return err
	}
	ids := make([]string, len(pays))
	for i, p := range pays {
		ids[i] = p.SourceID
	}
	labels, err := s.funding.Labels(ctx, scope, ids)
	if err != nil {
		return err
	}
	for _, p := range pays {
		r := paymentListRow(p, labels[p.SourceID])
		r.Clock = v.Clock
		v.Payments = append(v.Payments, r)
	}
	v.MorePayments = more
	subs, _, err := s.payments.SearchSubscriptions(ctx, scope, payment.Filter{CustomerID: v.ID}, paging.Page{Limit: customerShown})
	if err != nil {
		return err
	}
	for _, sub := range subs {
		r := subscriptionListRow(sub)
		r.Clock = v.Clock
		v.Subscriptions = append(v.Subscriptions, r)
	}
	return nil
}

// customerPage shows a customer with up to 100 of their sources, removed
// ones included.
func (s *Surface) customerPage(c *gin.Context) {
	ctx, scope := c.Request.Context(), current(c).Scope
	cu, err := s.customers.Get(ctx, scope, c.Param("id"))
	if err != nil {
		s.Fail(c, err)
		return
	}
	srcs, _, err := s.funding.ListForCustomer(ctx, scope, cu.ID, funding.WithRemoved, paging.Page{Limit: paging.MaxLimit})
	if err != nil {
		s.Fail(c, err)
		return
	}
	v := view.Customer{CustomerRow: customerRow(cu)}
	if v.Clock, err = s.clockMark(ctx, scope, cu.TestClock); err != nil {
		s.Fail(c, err)
		return
	}
	if cu.BusinessName != nil {
		v.Business = *cu.BusinessName
	}
	for _, src := range srcs {
		r := sourceRow(funding.Listed{Source: src})
		r.Clock = v.Clock
		v.Sources = append(v.Sources, r)
	}
	if err := s.addCustomerActivity(c, &v); err != nil {
		s.Fail(c, err)
		return
	}
	s.Page(c, http.StatusOK, view.CustomerPage(s.frame(c, v.Name, "customers"), v))
}

func (s *Surface) sourcesPage(c *gin.Context) {
	f := funding.Filter{Search: c.Query("q"), Status: c.Query("status")}
	status, unknown := http.StatusOK, ""
	if f.Status != "" && !slices.ContainsFunc(statusOptions, func(o view.Option) bool { return o.Value == f.Status }) {
		// Say so rather than show an empty list as if nothing matched.
		status, unknown, f.Status = http.StatusBadRequest, f.Status, ""
	}
	list, more, err := s.funding.Search(c.Request.Context(), current(c).Scope, f, pageOf(c, listSize))
	if err != nil {
		s.Fail(c, err)
		return
	}
	v := view.Sources{Query: f.Search, Status: f.Status, Statuses: statusOptions}
	if unknown != "" {
		v.Error = fmt.Sprintf("There is no status filter %q; showing every status. Choose one from the list.", unknown)
	}
	clocks := make([]string, len(list))
	for i, l := range list {
		clocks[i] = l.CustomerTestClock
	}
	marks, err := s.clockMarks(c.Request.Context(), current(c).Scope, clocks)
	if err != nil {
		s.Fail(c, err)
		return
	}
	v.Rows, v.Page = rowsOf(c, list, more, func(l funding.Listed) view.SourceRow {
		r := sourceRow(l)
		r.Clock = marks[l.CustomerTestClock]
		return r
	}, func(l funding.Listed) string { return l.ID })
	s.Page(c, status, view.SourcesPage(s.frame(c, "Funding sources", "sources"), v))
}

// sourceRow is a source for people: bank, masked account, status.
func sourceRow(l funding.Listed) view.SourceRow {
	r := view.SourceRow{ID: l.ID, Customer: l.CustomerName, Email: l.CustomerEmail, Bank: "Unknown bank",
		Account: components.AccountLabel(string(l.Source.AccountType), l.Source.LastFour), Status: string(l.Status), Created: shortTime(l.CreatedAt)}
	if l.BankName != nil && *l.BankName != "" {
		r.Bank = *l.BankName
	}
	if l.Nickname != nil {
		r.Nickname = *l.Nickname
	}
	switch {
	case l.Removed:
		r.Status = "Removed"
	case l.Status == funding.Unverified && l.Verification != nil && l.Verification.Status == "pending":
		r.Status = view.PendingLabel
	}
	return r
}

// sourcePage shows a source with its verification, the hosted link while
// the customer can still verify, the sandbox amounts, and its events.
func (s *Surface) sourcePage(c *gin.Context) {
	ctx, scope := c.Request.Context(), current(c).Scope
	src, err := s.funding.Get(ctx, scope, c.Param("id"))
	if err != nil {
		s.Fail(c, err)
		return
	}
	cu, err := s.customers.Get(ctx, scope, src.CustomerID)
	if err != nil {
		s.Fail(c, err)
		return
	}
	v := view.Source{
		SourceRow:  sourceRow(funding.Listed{Source: src, CustomerName: cu.FirstName + " " + cu.LastName, CustomerEmail: cu.Email}),
		CustomerID: src.CustomerID, Removed: src.Removed, Verification: "none",
	}
	if v.Clock, err = s.clockMark(ctx, scope, cu.TestClock); err != nil {
		s.Fail(c, err)
		return
	}
	if b := src.Block; b != nil {
		v.Blocked = b.Code + " " + b.Reason + ", since " + shortTime(b.BlockedAt)
	}
	if src.RemovedReason != nil {
		v.RemovedReason = *src.RemovedReason
	}
	if ck := src.AccountCheck; ck != nil {
		v.Check, v.CheckReasons = ck.Result, ck.Reasons
	}
	if o := src.Ownership; o != nil {
		v.Ownership = o.Result
		var scores []string
		if o.NameScore != nil {
			scores = append(scores, fmt.Sprintf("name %d of 100", *o.NameScore))
		}
		if o.EmailScore != nil {
			scores = append(scores, fmt.Sprintf("email %d of 100", *o.EmailScore))
		}
		if len(scores) > 0 {
			v.OwnershipScores = "Scores: " + strings.Join(scores, ", ") + "."
		}
	}
	vf := src.Verification
	if vf != nil {
		v.Verification, v.Attempts, v.ReturnCode = vf.Status, vf.AttemptsRemaining, vf.ReturnCode
		v.Method, v.FailureCode = vf.Method, vf.FailureCode
		v.Rail = map[string]string{funding.RailRTP: "RTP", funding.RailFedNow: "FedNow"}[vf.Rail]
		v.RailUnknown = vf.RailStatus() == funding.RailStatusUnknown
		v.Initiated, v.Expires = shortTime(vf.InitiatedAt), shortTime(vf.ExpiresAt)
		if d, err := time.Parse(time.DateOnly, vf.ExpectedArrivalDate); err == nil {
			v.Arrival = d.Format("Mon, Jan 2, 2006")
		}
	}
	unverified := !src.Removed && src.Status == funding.Unverified
	v.CanInitiate = unverified && (vf == nil || vf.Status == "failed" || vf.Status == "expired")
	if unverified {
		env, err := s.merchants.Environment(ctx, scope)
		if err != nil {
			s.Fail(c, err)
			return
		}
		v.HostedLink = fmt.Sprintf("%s/#/bank-account/%s/%s/%s", strings.TrimRight(s.cfg.HostedBaseURL.String(), "/"), env.PublicKey, src.CustomerID, src.ID)
	}
	if unverified && scope.Env == tenant.Sandbox && vf != nil && vf.Status == "pending" {
		p, _, err := s.funding.SandboxVerification(ctx, scope, src.ID)
		if err != nil {
			s.Fail(c, err)
			return
		}
		if a := p.Amounts; a != nil {
			v.Amounts = "$" + money.Format(int64(a[0])) + " and $" + money.Format(int64(a[1]))
		}
		v.Code = p.Code
	}
	events, err := s.webhooks.SourceEvents(ctx, scope, src.ID)
	if err != nil {
		s.Fail(c, err)
		return
	}
	// The source's events are on its customer's clock, read above.
	var marks map[string]*view.ClockMark
	if v.Clock != nil {
		marks = map[string]*view.ClockMark{v.Clock.ID: v.Clock}
	}
	for _, e := range events {
		v.Events = append(v.Events, eventRow(e, marks))
	}
	if err := s.addPayments(c, &v); err != nil {
		s.Fail(c, err)
		return
	}
	s.Page(c, http.StatusOK, view.SourcePage(s.frame(c, v.Bank+" "+v.Account, "sources"), v))
}

// addPayments adds a source's newest payments, subscriptions and mandates
// (with their evidence) to its page, and in sandbox the simulations that
// apply to them; each names the customer's clock (v.Clock).
func (s *Surface) addPayments(c *gin.Context, v *view.Source) error {
	ctx, scope := c.Request.Context(), current(c).Scope
	v.Sandbox = scope.Env == tenant.Sandbox
	v.ReturnCodes = returnCodeOptions()
	if v.Sandbox {
		v.ChangeCodes = changeCodeOptions()
	}
	pays, _, err := s.payments.List(ctx, scope, v.ID, paging.Page{Limit: listSize})
	if err != nil {
		return err
	}
	for _, p := range pays {
		r := view.PaymentRow{ID: p.ID, Amount: usd(p.Amount), Direction: string(p.Direction), Status: string(p.Status),
			Created: shortTime(p.CreatedAt), CanReturn: v.Sandbox && (p.Status == payment.Pending || p.Status == payment.Processed),
			Clock: v.Clock}
		if p.FailureCode != nil && p.FailureReason != nil {
			r.Failure = *p.FailureCode + " " + *p.FailureReason
		}
		if p.Attempt != nil {
			r.Attempt = fmt.Sprintf("subscription debit, attempt %d", *p.Attempt)
		}
		v.Payments = append(v.Payments, r)
	}
	subs, _, err := s.payments.ListSubscriptions(ctx, scope, v.ID, paging.Page{Limit: listSize})
	if err != nil {
		return err
	}
	for _, sub := range subs {
		r := subscriptionRow(sub)
		r.CanAdvance = v.Sandbox && sub.Status == payment.Active
		r.Clock = v.Clock
		v.Subscriptions = append(v.Subscriptions, r)
	}
	mandates, _, err := s.payments.ListMandates(ctx, scope, v.ID, paging.Page{Limit: listSize})
	if err != nil {
		return err
	}
	for _, m := range mandates {
		r := view.MandateRow{ID: m.ID, Type: string(m.Type), SECCode: m.SECCode, Status: m.Status,
			Accepted: m.AcceptedAt.Format("Jan 2, 2006 15:04:05 UTC"), Text: m.Text, TextSHA256: m.TextSHA256, Clock: v.Clock}
		if m.IPAddress != nil {
			r.IP = *m.IPAddress
		}
		if m.UserAgent != nil {
			r.UserAgent = *m.UserAgent
		}
		if m.RevokedAt != nil && m.RevokeReason != nil {
			r.Revoked = shortTime(*m.RevokedAt) + " (" + *m.RevokeReason + ")"
		}
		v.Mandates = append(v.Mandates, r)
	}
	return nil
}

func (s *Surface) simulateDepositReturn(c *gin.Context) {
	id, code := c.Param("id"), c.PostForm("code")
	_, err := s.consequences.SimulateDepositReturn(c.Request.Context(), current(c).Scope, id, code)
	s.done(c, err, "Sandbox: the micro-deposits came back with "+code+"; the verification failed.", "/dashboard/funding-sources/"+id)
}

func (s *Surface) simulateDepositExpiry(c *gin.Context) {
	id := c.Param("id")
	_, err := s.funding.SimulateDepositExpiry(c.Request.Context(), current(c).Scope, id)
	s.done(c, err, "Sandbox: the micro-deposits expired.", "/dashboard/funding-sources/"+id)
}

func (s *Surface) simulatePaymentReturn(c *gin.Context) {
	ctx, scope, code := c.Request.Context(), current(c).Scope, c.PostForm("code")
	p, err := s.payments.Get(ctx, scope, c.Param("id"))
	if err != nil {
		s.Fail(c, err)
		return
	}
	_, err = s.consequences.SimulateReturn(ctx, scope, p.ID, code)
	back := "/dashboard/funding-sources/" + p.SourceID
	if c.PostForm("back") == "payment" {
		back = paymentPath(p.ID)
	}
	s.done(c, err, "Sandbox: payment "+p.ID+" came back with "+code+".", back)
}

func (s *Surface) advanceSubscription(c *gin.Context) {
	ctx, scope := c.Request.Context(), current(c).Scope
	sub, err := s.payments.GetSubscription(ctx, scope, c.Param("id"))
	if err != nil {
		s.Fail(c, err)
		return
	}
	p, err := s.payments.Advance(ctx, scope, sub.ID)
	s.done(c, err, "Sandbox: created the next debit, "+p.ID+".", "/dashboard/funding-sources/"+sub.SourceID)
}

func (s *Surface) initiateFromPage(c *gin.Context) {
	id := c.Param("id")
	src, err := s.funding.InitiateVerificationBy(c.Request.Context(), current(c).Scope, id, c.PostForm("method"))
	msg := "Micro-deposits sent."
	if v := src.Verification; err == nil && v != nil && v.Method != funding.MethodInstant {
		if d, perr := time.Parse(time.DateOnly, v.ExpectedArrivalDate); perr == nil {
			msg = "Micro-deposits sent. They should arrive " + d.Format("Monday, January 2, 2006") + "."
		}
	}
	if v := src.Verification; err == nil && v.Method == funding.MethodInstant {
		msg = "Instant deposit sent; the customer can enter its code now."
		switch {
		case v.FailureCode != "":
			msg = "The bank refused the instant deposit (" + v.FailureCode + "): the account cannot be verified."
		case v.RailStatus() == funding.RailStatusUnknown:
			msg = "Instant deposit sent, but the rail's answer could not be read: it may not have arrived. The customer can enter its code once it does."
		}
	}
	s.done(c, err, msg, "/dashboard/funding-sources/"+id)
}

func (s *Surface) removeFromPage(c *gin.Context) {
	id := c.Param("id")
	_, err := s.consequences.Remove(c.Request.Context(), current(c).Scope, id)
	s.done(c, err, "Funding source removed.", "/dashboard/funding-sources/"+id)
}
