package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/webhook"
	view "github.com/fundsource/fundsource/templates/dashboard"
)

// logPageSize is how many events a page of the delivery log shows.
const logPageSize = 25

func (s *Surface) webhooksPage(c *gin.Context) {
	s.renderWebhooks(c, http.StatusOK, view.Webhooks{}, false)
}

// renderWebhooks shows the webhook page; v carries a refused URL and its
// error; reveal shows the signing secret.
func (s *Surface) renderWebhooks(c *gin.Context, status int, v view.Webhooks, reveal bool) {
	ctx, scope := c.Request.Context(), current(c).Scope
	reg, err := s.webhooks.Get(ctx, scope)
	switch {
	case err == nil:
		v.URL = reg.WebhookURL
		if reveal {
			v.Secret = reg.Secret
		}
		if reg.PreviousSecretExpiresAt != nil {
			v.PreviousExpires = shortTime(*reg.PreviousSecretExpiresAt)
		}
		v.Status, v.Failures = reg.Status, reg.ConsecutiveFailures
		if reg.DisabledAt != nil {
			v.DisabledAt = shortTime(*reg.DisabledAt)
		}
	case !errs.Is(err, errs.WebhookNotFound):
		s.Fail(c, err)
		return
	}
	entries, more, err := s.webhooks.Log(ctx, scope, pageOf(c, logPageSize))
	if err != nil {
		s.Fail(c, err)
		return
	}
	events := make([]event.Event, len(entries))
	for i, e := range entries {
		events[i] = e.Event
	}
	marks, err := s.eventClocks(ctx, scope, events)
	if err != nil {
		s.Fail(c, err)
		return
	}
	v.Log, v.Page = rowsOf(c, entries, more, func(e webhook.LogEntry) view.LogRow { return logRow(e, marks) },
		func(e webhook.LogEntry) string { return e.Event.ID })
	s.Page(c, status, view.WebhooksPage(s.frame(c, "Webhooks", "webhooks"), v))
}

// logRow is a delivery-log entry for people, with the clock its event
// happened on (marks are the clocks by id).
func logRow(e webhook.LogEntry, marks map[string]*view.ClockMark) view.LogRow {
	r := eventRow(e.Event, marks)
	r.State, r.Attempts, r.Code = e.State(), e.Attempts, "—"
	if e.LastStatusCode != nil {
		r.Code = strconv.Itoa(*e.LastStatusCode)
	} else if e.Attempts > 0 {
		r.Code = "no response"
	}
	if e.LastLatencyMS != nil {
		r.Latency = fmt.Sprintf("%d ms", *e.LastLatencyMS)
	}
	return r
}

// setWebhook sets or replaces the URL under the API's rules; a refused URL
// stays in the field with the reason.
func (s *Surface) setWebhook(c *gin.Context) {
	typed := c.PostForm("url")
	_, err := s.webhooks.Register(c.Request.Context(), current(c).Scope, typed, actor(c))
	if e, ok := errs.As(err); ok && (e.Code == errs.InvalidURL || e.Code == errs.InvalidRequest) {
		s.Resolve(c, err)
		s.renderWebhooks(c, http.StatusUnprocessableEntity, view.Webhooks{Typed: typed, Error: sentence(e.Message)}, false)
		return
	}
	s.done(c, err, "Webhook URL saved. New events go to it.", "/dashboard/webhooks")
}

func (s *Surface) deleteWebhookPage(c *gin.Context) {
	s.done(c, s.webhooks.Delete(c.Request.Context(), current(c).Scope, actor(c)),
		"Webhook URL deleted. Pending deliveries were canceled.", "/dashboard/webhooks")
}

// revealWebhookSecret shows the signing secret on this response only (a
// POST, so the secret never sits in an address or a history entry).
func (s *Surface) revealWebhookSecret(c *gin.Context) {
	s.renderWebhooks(c, http.StatusOK, view.Webhooks{}, true)
}

func (s *Surface) rollWebhookSecretPage(c *gin.Context) {
	if _, err := s.webhooks.RollSecret(c.Request.Context(), current(c).Scope, actor(c)); err != nil {
		s.done(c, err, "", "/dashboard/webhooks")
		return
	}
	s.renderWebhooks(c, http.StatusOK, view.Webhooks{}, true)
}

// enableWebhookPage turns a disabled endpoint back on; what it held goes out.
func (s *Surface) enableWebhookPage(c *gin.Context) {
	_, err := s.webhooks.Enable(c.Request.Context(), current(c).Scope, actor(c))
	s.done(c, err, "Endpoint enabled. Held events are being delivered, oldest first.", "/dashboard/webhooks")
}

func (s *Surface) testWebhookPage(c *gin.Context) {
	_, err := s.webhooks.SendTest(c.Request.Context(), current(c).Scope)
	s.done(c, err, "Test event sent. Its delivery shows below within seconds.", "/dashboard/webhooks")
}

func (s *Surface) eventPage(c *gin.Context) {
	ctx, scope := c.Request.Context(), current(c).Scope
	d, err := s.webhooks.Event(ctx, scope, c.Param("id"))
	if err != nil {
		s.Fail(c, err)
		return
	}
	_, hookErr := s.webhooks.Get(ctx, scope)
	marks, err := s.eventClocks(ctx, scope, []event.Event{d.Event})
	if err != nil {
		s.Fail(c, err)
		return
	}
	v := view.Event{ID: d.ID, Type: d.Type, Time: shortTime(d.CreatedAt), Payload: payload(d.Event), CanResend: hookErr == nil,
		Clock: eventMark(marks, d.Event)}
	for _, del := range d.Deliveries {
		dv := view.Delivery{ID: del.ID, State: webhook.State(del.Status, del.Attempts)}
		if del.NextAttemptAt != nil {
			dv.Next = shortTime(*del.NextAttemptAt)
		}
		for _, a := range del.Log {
			av := view.Attempt{Time: shortTime(a.AttemptedAt), URL: a.URL, Code: "no response",
				Latency: fmt.Sprintf("%d ms", a.LatencyMS), Body: a.ResponseBody}
			if a.StatusCode != nil {
				av.Code = strconv.Itoa(*a.StatusCode)
			}
			if a.Error != nil {
				av.Error = *a.Error
			}
			dv.Attempts = append(dv.Attempts, av)
		}
		v.Deliveries = append(v.Deliveries, dv)
	}
	s.Page(c, http.StatusOK, view.EventPage(s.frame(c, d.Type, "events"), v))
}

// payload is the event as its webhook body, indented.
func payload(e event.Event) string {
	raw, err := json.Marshal(e)
	if err != nil {
		return ""
	}
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") != nil {
		return string(raw)
	}
	return out.String()
}

func (s *Surface) resendEvent(c *gin.Context) {
	id := c.Param("id")
	_, err := s.webhooks.Redeliver(c.Request.Context(), current(c).Scope, id)
	s.done(c, err, "Queued for delivery to the current webhook URL.", "/dashboard/events/"+id)
}
