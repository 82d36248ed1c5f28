package dashboard

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/money"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	"github.com/fundsource/fundsource/internal/requestlog"
	"github.com/fundsource/fundsource/internal/sanctions"
	"github.com/fundsource/fundsource/templates/components"
	view "github.com/fundsource/fundsource/templates/dashboard"
	"github.com/fundsource/fundsource/web/surface"
)

// The activity pages: payments, subscriptions, events and API requests.
// Each is a GET form (works without JavaScript) whose search box finds one
// object by id and whose selects narrow the list; an unknown select value
// is said so and the list shows everything.

var (
	paymentStatuses = []view.Option{{Value: "", Label: "Any status"}, {Value: "pending", Label: "pending"},
		{Value: "held", Label: "held for review"},
		{Value: "processed", Label: "processed"}, {Value: "failed", Label: "failed"}, {Value: "canceled", Label: "canceled"}}
	directions = []view.Option{{Value: "", Label: "Debits and credits"}, {Value: "debit", Label: "Debits"},
		{Value: "credit", Label: "Credits"}}
	subscriptionStatuses = []view.Option{{Value: "", Label: "Any status"}, {Value: "active", Label: "active"},
		{Value: "canceled", Label: "canceled"}}
	methods       = []view.Option{{Value: "", Label: "Any method"}, {Value: "GET", Label: "GET"}, {Value: "POST", Label: "POST"}, {Value: "DELETE", Label: "DELETE"}}
	statusClasses = []view.Option{{Value: "", Label: "Any status"}, {Value: "2", Label: "2xx (succeeded)"},
		{Value: "4", Label: "4xx (refused)"}, {Value: "5", Label: "5xx (failed)"}}
)

// eventTypes are the event list's type filter: every type, and each group.
func eventTypes() []view.Option {
	opts := []view.Option{{Value: "", Label: "Any type"}}
	seen := map[string]bool{}
	for _, t := range event.Types {
		group, _, _ := strings.Cut(t, ".")
		if !seen[group] {
			seen[group] = true
			opts = append(opts, view.Option{Value: group + ".*", Label: "Every " + strings.ReplaceAll(group, "_", " ") + " event"})
		}
	}
	for _, t := range event.Types {
		opts = append(opts, view.Option{Value: t, Label: t})
	}
	return opts
}

// pick is a select's value from the query when it is one of the options;
// ok is false for any other value.
func pick(c *gin.Context, name string, opts []view.Option) (value string, ok bool) {
	v := c.Query(name)
	for _, o := range opts {
		if o.Value == v {
			return v, true
		}
	}
	return "", false
}

// filtersOf reads the search box and the selects; an unknown value of a
// select is reported in Error and ignored.
func filtersOf(c *gin.Context, selects ...view.Select) view.ActivityFilters {
	f := view.ActivityFilters{Query: strings.TrimSpace(c.Query("q"))}
	if len(f.Query) > 100 {
		f.Query = f.Query[:100]
	}
	for _, s := range selects {
		v, ok := pick(c, s.Name, s.Options)
		if !ok {
			f.Error = fmt.Sprintf("There is no %s %q; showing every %s.", strings.ToLower(s.Label), c.Query(s.Name), strings.ToLower(s.Label))
		}
		s.Value = v
		f.Selects = append(f.Selects, s)
	}
	return f
}

// filterValues are the selects' values by name.
type filterValues map[string]string

func (f filterValues) get(name string) string { return f[name] }

func valuesOf(f view.ActivityFilters) filterValues {
	m := filterValues{}
	for _, s := range f.Selects {
		m[s.Name] = s.Value
	}
	return m
}

// missing reports whether err says the searched-for object does not exist.
func missing(err error) bool {
	e, ok := errs.As(err)
	return ok && surface.StatusOf(e.Code) == http.StatusNotFound
}

// paymentRow is a payment for people.
func paymentRow(p payment.Payment) view.PaymentRow {
	r := view.PaymentRow{ID: p.ID, Amount: usd(p.Amount), Direction: string(p.Direction), Status: string(p.Status),
		Created: shortTime(p.CreatedAt)}
	if p.FailureCode != nil && p.FailureReason != nil {
		r.Failure = *p.FailureCode + " " + *p.FailureReason
	}
	if p.HoldReason != nil {
		r.Hold = holdWords(*p.HoldReason)
	}
	if p.Attempt != nil && p.SubscriptionID != nil {
		r.Attempt = fmt.Sprintf("subscription debit, attempt %d", *p.Attempt)
	}
	return r
}

// partyOf names a source's customer and bank account from its label.
func partyOf(l funding.Label) view.Party {
	if l.SourceID == "" {
		return view.Party{}
	}
	p := view.Party{CustomerID: l.CustomerID, Customer: l.CustomerName, Bank: cmp.Or(l.BankName, "Unknown bank"),
		Account: components.AccountLabel(l.AccountType, l.LastFour), Sanctions: l.Screening == sanctions.PotentialMatch}
	return p
}

// paymentListRow is a payment of a list, named by its customer and bank
// account, with its description, return code and what it is to others.
func paymentListRow(p payment.Payment, l funding.Label) view.PaymentListRow {
	r := view.PaymentListRow{PaymentRow: paymentRow(p), SourceID: p.SourceID, Party: partyOf(l)}
	if p.Description != nil {
		r.Description = *p.Description
	}
	if p.FailureCode != nil {
		r.Code = *p.FailureCode
	}
	if p.Reversal != nil {
		r.Marks = append(r.Marks, "reversed")
	}
	if p.ReversalOf != nil {
		r.Marks = append(r.Marks, "reversal")
	}
	if p.RetryOf != nil && p.Attempt != nil {
		r.Marks = append(r.Marks, fmt.Sprintf("retry, attempt %d", *p.Attempt))
	}
	if p.RefundOf != nil {
		r.Marks = append(r.Marks, "refund")
	}
	if p.RefundedCents > 0 {
		r.Marks = append(r.Marks, "refunded")
	}
	if p.Rail == payment.RailRTP || p.Rail == payment.RailFedNow {
		r.Marks = append(r.Marks, "instant")
	}
	return r
}

// railWords is how payment p went, for people, and why an auto credit
// did not go instant ("" when it did, or was not asked to).
func railWords(p payment.Payment) (rail, fallback string) {
	switch p.Rail {
	case payment.RailRTP:
		rail = "Instant (RTP)"
	case payment.RailFedNow:
		rail = "Instant (FedNow)"
	default:
		rail = "ACH"
		if p.SameDay {
			rail = "ACH, same day"
		}
	}
	if p.FallbackReason != nil {
		fallback = strings.ReplaceAll(*p.FallbackReason, "_", " ")
	}
	return rail, fallback
}

// railStatusWords says where an instant credit stands on its rail
// (rail_status); "" for a payment that is not on one.
func railStatusWords(p payment.Payment) string {
	if p.RailStatus == nil {
		return ""
	}
	switch *p.RailStatus {
	case payment.RailQueued:
		return "Queued: not sent to the rail yet"
	case payment.RailSending:
		return "Being sent to the rail"
	case payment.RailUnknown:
		return "Sent, waiting for the rail's status answer (rail status unknown): the credit may have been made, and it is never sent twice"
	case payment.RailAccepted:
		return "Accepted by the rail"
	case payment.RailRejected:
		return "Rejected by the rail"
	}
	return *p.RailStatus
}

func (s *Surface) paymentsPage(c *gin.Context) {
	ctx, scope := c.Request.Context(), current(c).Scope
	v := view.Payments{Filters: filtersOf(c,
		view.Select{Name: "status", Label: "Status", Options: paymentStatuses},
		view.Select{Name: "direction", Label: "Direction", Options: directions})}
	if src := c.Query("source"); len(src) <= 100 {
		v.Source = src
	}
	v.SettlementDate = calendar.DateOf(s.Now()).Format(time.DateOnly)
	var err error
	if v.Balances, err = s.balances(ctx, scope); err != nil {
		s.Fail(c, err)
		return
	}
	if v.Unmatched, err = s.unmatchedAnswers(ctx, scope); err != nil {
		s.Fail(c, err)
		return
	}
	var list []payment.Payment
	var more bool
	if v.Filters.Query != "" {
		p, err := s.payments.Get(ctx, scope, v.Filters.Query)
		switch {
		case err == nil:
			list = []payment.Payment{p}
		case !missing(err):
			s.Fail(c, err)
			return
		}
	} else {
		vals := valuesOf(v.Filters)
		if list, more, err = s.payments.Search(ctx, scope, payment.Filter{SourceID: v.Source, Status: vals.get("status"),
			Direction: payment.Direction(vals.get("direction"))}, pageOf(c, listSize)); err != nil {
			s.Fail(c, err)
			return
		}
	}
	ids := make([]string, len(list))
	for i, p := range list {
		ids[i] = p.SourceID
	}
	labels, err := s.funding.Labels(ctx, scope, ids)
	if err != nil {
		s.Fail(c, err)
		return
	}
	marks, err := s.labelClocks(ctx, scope, labels)
	if err != nil {
		s.Fail(c, err)
		return
	}
	row := func(p payment.Payment) view.PaymentListRow {
		r := paymentListRow(p, labels[p.SourceID])
		r.Clock = marks[labels[p.SourceID].TestClock]
		return r
	}
	if v.Filters.Query != "" {
		for _, p := range list {
			v.Rows = append(v.Rows, row(p))
		}
	} else {
		v.Rows, v.Page = rowsOf(c, list, more, row, func(p payment.Payment) string { return p.ID })
	}
	s.Page(c, http.StatusOK, view.PaymentsPage(s.frame(c, "Payments", "payments"), v))
}

func (s *Surface) paymentPage(c *gin.Context) {
	p, err := s.payments.Get(c.Request.Context(), current(c).Scope, c.Param("id"))
	if err != nil {
		s.Fail(c, err)
		return
	}
	labels, err := s.funding.Labels(c.Request.Context(), current(c).Scope, []string{p.SourceID})
	if err != nil {
		s.Fail(c, err)
		return
	}
	// Retry and Reverse are offered only where the service's rule would
	// do them (a debit retried already is retried by its latest attempt;
	// an instant credit is final).
	canRetry, err := s.payments.CanRetry(c.Request.Context(), current(c).Scope, p)
	if err != nil {
		s.Fail(c, err)
		return
	}
	canReverse, err := s.payments.CanReverse(c.Request.Context(), current(c).Scope, p)
	if err != nil {
		s.Fail(c, err)
		return
	}
	v := view.Payment{PaymentRow: paymentRow(p), SourceID: p.SourceID, CustomerID: p.CustomerID, Finality: finalityOf(p),
		Actions: actionsOf(current(c).Scope, p, canRetry, canReverse), Party: partyOf(labels[p.SourceID])}
	if v.Clock, err = s.clockMark(c.Request.Context(), current(c).Scope, labels[p.SourceID].TestClock); err != nil {
		s.Fail(c, err)
		return
	}
	if p.Description != nil {
		v.Description = *p.Description
	}
	v.Purpose = string(p.Purpose)
	if p.SubscriptionID != nil {
		v.SubscriptionID = *p.SubscriptionID
	}
	if p.SettledAt != nil {
		v.Settled = shortTime(*p.SettledAt)
	}
	v.Rail, v.Fallback = railWords(p)
	v.RailStatus = railStatusWords(p)
	if p.TraceNumber != nil {
		v.Trace = *p.TraceNumber
	}
	if p.RefundOf != nil {
		v.RefundOf = *p.RefundOf
	}
	if p.RefundedCents > 0 && p.RefundedAmount != nil {
		v.Refunded = usd(*p.RefundedAmount)
	}
	if err := s.presentments(c, p, &v); err != nil {
		s.Fail(c, err)
		return
	}
	s.Page(c, http.StatusOK, view.PaymentPage(s.frame(c, "Payment "+p.ID, "payments"), v))
}

// subscriptionListRow is a subscription of a list.
func subscriptionListRow(sub payment.Subscription) view.SubscriptionListRow {
	return view.SubscriptionListRow{SubscriptionRow: subscriptionRow(sub), SourceID: sub.SourceID, Created: shortTime(sub.CreatedAt)}
}

// subscriptionRow is a subscription as every table shows it: its amount
// and interval, its status, its next and retry dates and why it ended.
func subscriptionRow(sub payment.Subscription) view.SubscriptionRow {
	r := view.SubscriptionRow{ID: sub.ID, Amount: usd(sub.Amount) + " " + string(sub.Interval), Status: sub.Status}
	if sub.NextDate != nil {
		r.Next = *sub.NextDate
	}
	if sub.RetryDate != nil {
		r.Retry = *sub.RetryDate
	}
	if sub.CancelReason != nil {
		r.Reason = strings.ReplaceAll(*sub.CancelReason, "_", " ")
	}
	return r
}

func (s *Surface) subscriptionsPage(c *gin.Context) {
	ctx, scope := c.Request.Context(), current(c).Scope
	v := view.Subscriptions{Filters: filtersOf(c, view.Select{Name: "status", Label: "Status", Options: subscriptionStatuses})}
	var list []payment.Subscription
	var more bool
	var err error
	if v.Filters.Query != "" {
		sub, err := s.payments.GetSubscription(ctx, scope, v.Filters.Query)
		switch {
		case err == nil:
			list = []payment.Subscription{sub}
		case !missing(err):
			s.Fail(c, err)
			return
		}
	} else if list, more, err = s.payments.SearchSubscriptions(ctx, scope, payment.Filter{Status: valuesOf(v.Filters).get("status")}, pageOf(c, listSize)); err != nil {
		s.Fail(c, err)
		return
	}
	// The customers' clocks: one read of the sources' labels and one of
	// the clocks, for the whole list.
	ids := make([]string, len(list))
	for i, sub := range list {
		ids[i] = sub.SourceID
	}
	labels, err := s.funding.Labels(ctx, scope, ids)
	if err != nil {
		s.Fail(c, err)
		return
	}
	marks, err := s.labelClocks(ctx, scope, labels)
	if err != nil {
		s.Fail(c, err)
		return
	}
	row := func(sub payment.Subscription) view.SubscriptionListRow {
		r := subscriptionListRow(sub)
		r.Clock = marks[labels[sub.SourceID].TestClock]
		return r
	}
	if v.Filters.Query != "" {
		for _, sub := range list {
			v.Rows = append(v.Rows, row(sub))
		}
	} else {
		v.Rows, v.Page = rowsOf(c, list, more, row, func(sub payment.Subscription) string { return sub.ID })
	}
	s.Page(c, http.StatusOK, view.SubscriptionsPage(s.frame(c, "Subscriptions", "subscriptions"), v))
}

func (s *Surface) eventsPage(c *gin.Context) {
	ctx, scope := c.Request.Context(), current(c).Scope
	v := view.Events{Filters: filtersOf(c, view.Select{Name: "type", Label: "Type", Options: eventTypes()})}
	if v.Filters.Query != "" {
		d, err := s.webhooks.Event(ctx, scope, v.Filters.Query)
		switch {
		case err == nil:
			marks, err := s.eventClocks(ctx, scope, []event.Event{d.Event})
			if err != nil {
				s.Fail(c, err)
				return
			}
			v.Rows = append(v.Rows, eventRow(d.Event, marks))
		case !missing(err):
			s.Fail(c, err)
			return
		}
		s.Page(c, http.StatusOK, view.EventsPage(s.frame(c, "Events", "events"), v))
		return
	}
	list, more, err := s.webhooks.Events(ctx, scope, valuesOf(v.Filters).get("type"), pageOf(c, listSize))
	if err != nil {
		s.Fail(c, err)
		return
	}
	about := make(map[string]eventSubject, len(list))
	var sources []string
	for _, e := range list {
		about[e.ID] = subjectOf(e)
		sources = append(sources, about[e.ID].SourceID)
	}
	labels, err := s.funding.Labels(ctx, scope, sources)
	if err != nil {
		s.Fail(c, err)
		return
	}
	marks, err := s.eventClocks(ctx, scope, list)
	if err != nil {
		s.Fail(c, err)
		return
	}
	v.Rows, v.Page = rowsOf(c, list, more, func(e event.Event) view.LogRow {
		r := eventRow(e, marks)
		r.About = about[e.ID].words(labels)
		return r
	}, func(e event.Event) string { return e.ID })
	s.Page(c, http.StatusOK, view.EventsPage(s.frame(c, "Events", "events"), v))
}

// eventRow is an event of a list, with the clock it happened on (marks
// are the clocks by id).
func eventRow(e event.Event, marks map[string]*view.ClockMark) view.LogRow {
	return view.LogRow{ID: e.ID, Type: e.Type, Time: shortTime(e.CreatedAt), Clock: eventMark(marks, e)}
}

func (s *Surface) requestsPage(c *gin.Context) {
	ctx, scope := c.Request.Context(), current(c).Scope
	v := view.Requests{Filters: filtersOf(c,
		view.Select{Name: "method", Label: "Method", Options: methods},
		view.Select{Name: "status", Label: "Status", Options: statusClasses})}
	// This process's buffered requests first, so a person sees their own.
	if err := s.requests.Flush(ctx); err != nil {
		s.Log.WarnContext(ctx, "request log: flush before reading", "error", err)
	}
	vals := valuesOf(v.Filters)
	class, _ := strconv.Atoi(vals.get("status"))
	f := requestlog.Filter{Method: vals.get("method"), Class: class, RequestID: v.Filters.Query}
	list, more, err := s.requests.Search(ctx, scope, f, pageOf(c, 50))
	if err != nil {
		s.Fail(c, err)
		return
	}
	v.Rows, v.Page = rowsOf(c, list, more, func(e requestlog.Entry) view.RequestRow {
		return view.RequestRow{ID: e.RequestID, Time: e.At.UTC().Format("Jan 2, 15:04:05"), Method: e.Method, Path: e.Path,
			Status: strconv.Itoa(e.Status), OK: e.Status < 400, Latency: latency(e.Latency)}
	}, requestlog.Entry.Cursor)
	v.Dropped = s.requests.Dropped()
	s.Page(c, http.StatusOK, view.RequestsPage(s.frame(c, "API requests", "requests"), v))
}

// latency is a request's latency for people: "0.4 ms", "12 ms", "1.2 s".
func latency(d time.Duration) string {
	switch {
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// holdWords says why a payment is held, for people.
func holdWords(reason string) string {
	switch reason {
	case payment.HoldSanctions:
		return "Sanctions screening: the customer's name resembles one on OFAC's SDN list"
	case payment.HoldReturnRateUnauthorized:
		return "Unauthorized return rate above 0.5%"
	case payment.HoldReturnRateAdministrative:
		return "Administrative return rate above 3%"
	case payment.HoldReturnRateOverall:
		return "Overall return rate above 15%"
	}
	if rule, ok := strings.CutPrefix(reason, payment.HoldFraudPrefix); ok {
		for _, r := range payment.Rules {
			if r.ID == rule {
				return "Fraud rule " + rule + ": " + r.Description
			}
		}
	}
	return reason
}

// unmatchedAnswersShown bounds the bank's unmatched answers on the
// payments page.
const unmatchedAnswersShown = 50

// unmatchedAnswers are the bank's answers kept unmatched whose batch named
// the production originator's own company id. The platform's company id
// (ACH_COMPANY_ID) names no single merchant, so its answers stay with the
// operator.
func (s *Surface) unmatchedAnswers(ctx context.Context, scope tenant.Scope) ([]view.BankAnswer, error) {
	if s.answers == nil || s.originators == nil || !scope.Env.Live() {
		return nil, nil
	}
	o, err := s.originators.Get(ctx, scope)
	if missing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if o.CompanyID == "" || o.CompanyID == s.cfg.ACHCompanyID {
		return nil, nil
	}
	list, err := s.answers.UnmatchedAnswersOfCompany(ctx, o.CompanyID, unmatchedAnswersShown)
	if err != nil {
		return nil, err
	}
	out := make([]view.BankAnswer, len(list))
	for i, a := range list {
		out[i] = view.BankAnswer{OriginalTrace: a.OriginalTrace, Answer: "Return " + a.Code, Last4: a.AccountLast4, Arrived: a.Arrived}
		if a.Kind == ach.AnswerChange {
			out[i].Answer = "Notification of change " + a.Code
		} else {
			out[i].Amount = usd(money.Format(a.Cents))
		}
		if d, err := time.Parse(time.DateOnly, a.Arrived); err == nil {
			out[i].Arrived = d.Format("Jan 2, 2006")
		}
	}
	return out, nil
}

// settlementsCSV downloads the day's settlements report as CSV, the API's
// GET /v2/reports/settlements with Accept: text/csv.
func (s *Surface) settlementsCSV(c *gin.Context) {
	r, err := s.payments.SettlementReport(c.Request.Context(), current(c).Scope, c.Query("date"))
	if err == nil {
		err = surface.SettlementsCSV(c, r)
	}
	if err != nil {
		s.Fail(c, err)
	}
}

// eventSubject is what an event's data says of whom it is about.
type eventSubject struct {
	SourceID string `json:"funding_source_id"`
	Amount   string `json:"amount"`
}

// subjectOf reads an event's subject from its data; the zero subject when
// the data names none.
func subjectOf(e event.Event) eventSubject {
	var sub eventSubject
	if b, err := json.Marshal(e.Data); err == nil {
		_ = json.Unmarshal(b, &sub) // data without these fields names no subject
	}
	return sub
}

// words names the subject for people: the customer, the bank account and
// the amount, as far as they are known.
func (sub eventSubject) words(labels map[string]funding.Label) string {
	var parts []string
	if l, ok := labels[sub.SourceID]; ok && sub.SourceID != "" {
		p := partyOf(l)
		parts = append(parts, cmp.Or(p.Customer, p.CustomerID), p.Bank+" "+p.Account)
	}
	if sub.Amount != "" {
		parts = append(parts, usd(sub.Amount))
	}
	return strings.Join(parts, " · ")
}
