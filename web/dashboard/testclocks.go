package dashboard

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/testclock"
	view "github.com/fundsource/fundsource/templates/dashboard"
)

// clockCustomersShown is how many customers the clocks page names under
// each clock (a clock carries up to customer.MaxPerClock).
const clockCustomersShown = 10

// clockRefresh is how often, in seconds, the clocks page reloads itself
// while a clock advances (a Refresh header: no script needed).
const clockRefresh = "5"

// localTime is the value format of a datetime-local field; the page's
// fields are in UTC.
const localTime = "2006-01-02T15:04"

// quickAdvances are the advance form's presets, by the value its button sends.
var quickAdvances = []struct {
	value, label string
	years, days  int
}{
	{"1d", "+1 day", 0, 1},
	{"1w", "+1 week", 0, 7},
	{"30d", "+30 days", 0, 30},
	{"60d", "+60 days", 0, 60},
	{"1y", "+1 year", 1, 0},
}

func (s *Surface) testClocksPage(c *gin.Context) {
	s.renderTestClocks(c, http.StatusOK, view.ClockForm{})
}

// renderTestClocks shows every clock of the merchant (at most
// testclock.MaxClocks, so one page) with its customers, read in one more
// query for all clocks.
func (s *Surface) renderTestClocks(c *gin.Context, status int, form view.ClockForm) {
	ctx, scope := c.Request.Context(), current(c).Scope
	v := view.TestClocks{Form: form, Max: testclock.MaxClocks}
	if scope.Env != tenant.Sandbox || s.clocks == nil {
		s.Page(c, status, view.TestClocksPage(s.frame(c, "Test clocks", "test-clocks"), v))
		return
	}
	clocks, _, err := s.clocks.List(ctx, scope, paging.Page{Limit: testclock.MaxClocks})
	if err != nil {
		s.Fail(c, err)
		return
	}
	ids := make([]string, len(clocks))
	for i, k := range clocks {
		ids[i] = k.ID
	}
	on, err := s.customers.OnClocks(ctx, scope, ids, clockCustomersShown)
	if err != nil {
		s.Fail(c, err)
		return
	}
	for _, k := range clocks {
		r := clockRow(k, on.Count[k.ID])
		for _, cu := range on.Newest[k.ID] {
			r.Shown = append(r.Shown, view.ClockCustomer{ID: cu.ID, Name: cu.FirstName + " " + cu.LastName, Email: cu.Email})
		}
		v.Advancing = v.Advancing || r.Advancing
		v.Clocks = append(v.Clocks, r)
	}
	v.Full = len(clocks) >= testclock.MaxClocks
	if v.Form.FrozenTime == "" && v.Form.Error == "" {
		v.Form.FrozenTime = s.Now().UTC().Truncate(time.Minute).Add(time.Minute).Format(localTime)
	}
	if v.Advancing {
		c.Header("Refresh", clockRefresh)
	}
	s.Page(c, status, view.TestClocksPage(s.frame(c, "Test clocks", "test-clocks"), v))
}

// clockRow is a clock as the clocks page shows it. Its form's values are
// in UTC, as the page says.
func clockRow(k testclock.Clock, customers int) view.ClockRow {
	ft := k.FrozenTime.UTC()
	r := view.ClockRow{ID: k.ID, Label: clockLabel(k), Frozen: clockTime(ft), FrozenUTC: ft.Format(time.RFC3339),
		Advancing: k.Status == testclock.Advancing, Customers: customers,
		Next: ft.AddDate(0, 0, 1).Format(localTime),
		Min:  ft.Add(time.Minute).Format(localTime), Max: testclock.MaxAdvance(ft).Format(localTime), Quick: quickOptions}
	if k.Name != nil {
		r.Name = *k.Name
	}
	if k.AdvanceTo != nil {
		r.AdvanceTo = clockTime(*k.AdvanceTo)
	}
	return r
}

// quickOptions are quickAdvances as the advance form's choices, the same
// under every clock.
var quickOptions = func() []view.Option {
	out := make([]view.Option, len(quickAdvances))
	for i, q := range quickAdvances {
		out[i] = view.Option{Value: q.value, Label: q.label}
	}
	return out
}()

// clockTime is a clock's time for people: with the weekday, since banking
// days are what an advance is about.
func clockTime(t time.Time) string {
	return t.UTC().Format("Mon, Jan 2, 2006, 15:04 UTC")
}

// parseLocal reads a datetime-local value (with or without seconds) as UTC.
func parseLocal(v string) (time.Time, bool) {
	for _, layout := range []string{localTime, "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, strings.TrimSpace(v), time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// clocksHere reports whether the shown environment has clocks; when not,
// it answers the post with the refusal on the clocks page (a stale page
// or a hand-made form: production's page offers none).
func (s *Surface) clocksHere(c *gin.Context) bool {
	if current(c).Scope.Env == tenant.Sandbox && s.clocks != nil {
		return true
	}
	s.done(c, errs.New(errs.PermissionDenied, "Test clocks are sandbox only; switch to Sandbox to use them."), "", "/dashboard/test-clocks")
	return false
}

// createTestClock creates a clock from the form; a refusal is shown on
// the page in the service's words, with the form as typed.
func (s *Surface) createTestClock(c *gin.Context) {
	if !s.clocksHere(c) {
		return
	}
	form := view.ClockForm{Name: c.PostForm("name"), FrozenTime: c.PostForm("frozen_time")}
	var in testclock.Input
	if n := strings.TrimSpace(form.Name); n != "" {
		in.Name = &n
	}
	// Empty is now, rounded up to the second: the service refuses a time
	// before its own now's second, which may be a later one.
	frozen := s.Now().UTC()
	if whole := frozen.Truncate(time.Second); whole.Before(frozen) {
		frozen = whole.Add(time.Second)
	}
	if form.FrozenTime != "" {
		t, ok := parseLocal(form.FrozenTime)
		if !ok {
			form.Error, form.ErrorField = "Enter the frozen time as a date and a time.", "frozen_time"
			s.Resolve(c, errs.Invalid("frozen_time", form.Error))
			s.renderTestClocks(c, http.StatusUnprocessableEntity, form)
			return
		}
		frozen = t
	}
	in.FrozenTime = &frozen
	k, err := s.clocks.Create(c.Request.Context(), current(c).Scope, in)
	if e, ok := errs.As(err); ok && (e.Code == errs.InvalidRequest || e.Code == errs.LimitExceeded) {
		s.Resolve(c, err)
		form.Error, form.ErrorField = sentence(e.Message), e.Param
		s.renderTestClocks(c, http.StatusUnprocessableEntity, form)
		return
	}
	s.done(c, err, "Created test clock "+clockLabel(k)+" at "+clockTime(k.FrozenTime)+".", "/dashboard/test-clocks")
}

// advanceTestClock asks for an advance: by a preset from the clock's
// frozen time, or to the time typed.
func (s *Surface) advanceTestClock(c *gin.Context) {
	ctx, scope, id := c.Request.Context(), current(c).Scope, c.Param("id")
	if !s.clocksHere(c) {
		return
	}
	var to time.Time
	if by := c.PostForm("by"); by != "" {
		k, err := s.clocks.Get(ctx, scope, id)
		if err != nil {
			s.done(c, err, "", "/dashboard/test-clocks")
			return
		}
		found := false
		for _, q := range quickAdvances {
			if q.value == by {
				to, found = k.FrozenTime.AddDate(q.years, 0, q.days), true
			}
		}
		if !found {
			s.done(c, errs.Invalid("by", "Choose one of the quick advances."), "", "/dashboard/test-clocks")
			return
		}
	} else {
		t, ok := parseLocal(c.PostForm("frozen_time"))
		if !ok {
			s.done(c, errs.Invalid("frozen_time", "Enter the new time as a date and a time."), "", "/dashboard/test-clocks")
			return
		}
		to = t
	}
	k, err := s.clocks.Advance(ctx, scope, id, testclock.AdvanceInput{FrozenTime: &to})
	s.done(c, err, "Advancing "+clockLabel(k)+" to "+clockTime(to)+".", "/dashboard/test-clocks")
}

// deleteTestClock deletes a clock and everything on it.
func (s *Surface) deleteTestClock(c *gin.Context) {
	if !s.clocksHere(c) {
		return
	}
	k, err := s.clocks.Delete(c.Request.Context(), current(c).Scope, c.Param("id"))
	s.done(c, err, "Deleted test clock "+clockLabel(k)+" and everything on it.", "/dashboard/test-clocks")
}

func clockLabel(k testclock.Clock) string {
	if k.Name != nil {
		return *k.Name
	}
	return k.ID
}

// clockMark is the clock a customer lives on, for its pages and those of
// its sources and payments; nil on the wall clock.
func (s *Surface) clockMark(ctx context.Context, scope tenant.Scope, id string) (*view.ClockMark, error) {
	if id == "" || s.clocks == nil {
		return nil, nil
	}
	k, err := s.clocks.Get(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	return markOf(k), nil
}

func markOf(k testclock.Clock) *view.ClockMark {
	return &view.ClockMark{ID: k.ID, Label: clockLabel(k), Frozen: clockTime(k.FrozenTime),
		FrozenUTC: k.FrozenTime.UTC().Format(time.RFC3339), Advancing: k.Status == testclock.Advancing}
}

// clockMarks are the scope's clocks by id, for a list whose rows name
// their customers' clocks: one read for the whole list (a merchant has at
// most testclock.MaxClocks), none when no row is on a clock.
func (s *Surface) clockMarks(ctx context.Context, scope tenant.Scope, clockIDs []string) (map[string]*view.ClockMark, error) {
	if !slices.ContainsFunc(clockIDs, func(id string) bool { return id != "" }) || s.clocks == nil {
		return nil, nil
	}
	clocks, _, err := s.clocks.List(ctx, scope, paging.Page{Limit: testclock.MaxClocks})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*view.ClockMark, len(clocks))
	for _, k := range clocks {
		out[k.ID] = markOf(k)
	}
	return out, nil
}

// eventMark is the clock event e happened on, at the clock's time then;
// marks are the clocks by id (clockMarks), nil on the wall clock. A clock
// not among them (deleted since the read) is named by its id.
func eventMark(marks map[string]*view.ClockMark, e event.Event) *view.ClockMark {
	if e.TestClock == "" {
		return nil
	}
	m := view.ClockMark{ID: e.TestClock, Label: e.TestClock}
	if k := marks[e.TestClock]; k != nil {
		m = *k
	}
	m.Frozen, m.FrozenUTC, m.Advancing = clockTime(e.ClockTime), e.ClockTime.UTC().Format(time.RFC3339), false
	return &m
}

// eventClocks are the clocks of the events' test clocks by id, in one
// read for all of them (clockMarks).
func (s *Surface) eventClocks(ctx context.Context, scope tenant.Scope, events []event.Event) (map[string]*view.ClockMark, error) {
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.TestClock
	}
	return s.clockMarks(ctx, scope, ids)
}

// labelClocks are the clocks of the labelled sources' customers by id,
// in one read for all of them (clockMarks).
func (s *Surface) labelClocks(ctx context.Context, scope tenant.Scope, labels map[string]funding.Label) (map[string]*view.ClockMark, error) {
	ids := make([]string, 0, len(labels))
	for _, l := range labels {
		ids = append(ids, l.TestClock)
	}
	return s.clockMarks(ctx, scope, ids)
}
