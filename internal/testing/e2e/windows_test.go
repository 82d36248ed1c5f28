package e2e_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/payment"
	th "github.com/fundsource/fundsource/internal/testing/harness"
)

func et(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, calendar.Eastern)
}

// sameDayOn lets every originator send Same Day ACH entries.
type sameDayOn struct{ payment.AllActive }

func (sameDayOn) SameDay(context.Context, tenant.Scope) (bool, error) { return true, nil }

// windowSetup is a production merchant allowed same-day entries, with a
// Verified source of an individual, and an originator on an outbox.
type windowSetup struct {
	h   *harness
	key string
	src string
	dir string
	o   *ach.Originator
}

func newWindowSetup(t *testing.T) *windowSetup {
	h := newHarness(t)
	h.Payments.WithOriginators(sameDayOn{})
	_, key, _ := liveMerchant(t, h)
	src := th.WantOK(t, h.Post("/v2/on-demand/funding-source", key, th.SourceBody(h.Customer(key), "021000021", "000123456789")))["funding_source_id"].(string)
	dir := t.TempDir()
	return &windowSetup{h: h, key: key, src: src, dir: dir, o: h.originator(achConfig(dir))}
}

// credit creates a production credit, same-day or not, at the clock's time.
func (s *windowSetup) credit(t *testing.T, amount string, sameDay bool) string {
	t.Helper()
	body := `{"funding_source_id":"` + s.src + `","amount":"` + amount + `","direction":"credit","same_day":` + map[bool]string{true: "true", false: "false"}[sameDay] + `}`
	return th.WantOK(t, s.h.Post("/v2/payments", s.key, body))["payment_id"].(string)
}

// tick runs the minute's origination at t and returns the files written.
func (s *windowSetup) tick(t *testing.T, at time.Time) []string {
	t.Helper()
	s.h.Clock.Set(at)
	files, err := s.o.Tick(context.Background())
	if err != nil {
		t.Fatalf("Tick at %s: %v", at, err)
	}
	return files
}

// effective is the effective entry date of a payment's batch in its file,
// and the payment's own dates as the API shows them.
func (s *windowSetup) effective(t *testing.T, paymentID string) (batch string, p map[string]any) {
	t.Helper()
	var r struct {
		Trace string `db:"trace_number"`
		Name  string `db:"name"`
	}
	if err := s.h.SQL().Get(&r, `SELECT e.trace_number, f.name FROM ach_entries e JOIN ach_files f ON f.id = e.file_id WHERE e.payment_id = $1`, paymentID); err != nil {
		t.Fatalf("entry of %s: %v", paymentID, err)
	}
	f := readACH(t, s.dir)[r.Name]
	if f == nil {
		t.Fatalf("file %s of %s is not in the outbox", r.Name, paymentID)
	}
	for _, b := range f.Batches {
		for _, e := range b.GetEntries() {
			if e.TraceNumber == r.Trace {
				batch = b.GetHeader().EffectiveEntryDate
			}
		}
	}
	return batch, th.WantOK(t, s.h.Get("/v2/payments/"+paymentID, s.key))
}

// TestAWindowIsBuiltOnceAcrossProcesses: between windows nothing is built;
// two processes ticking at the same window build one file; a window
// missed while nothing ran is caught up once, the same day.
func TestAWindowIsBuiltOnceAcrossProcesses(t *testing.T) {
	t.Parallel()
	s := newWindowSetup(t)
	s.h.Clock.Set(et(2026, 11, 2, 9, 30))
	first := s.credit(t, "1.00", false)
	if files := s.tick(t, et(2026, 11, 2, 9, 44)); len(files) != 0 {
		t.Fatalf("before the first window: %v", files)
	}

	// Two processes (originators on the same database) tick at 09:45.
	other := s.h.originator(achConfig(s.dir))
	s.h.Clock.Set(et(2026, 11, 2, 9, 45))
	var wg sync.WaitGroup
	counts := make([]int, 2)
	for i, o := range []*ach.Originator{s.o, other} {
		wg.Go(func() {
			files, err := o.Tick(context.Background())
			if err != nil {
				t.Errorf("Tick: %v", err)
			}
			counts[i] = len(files)
		})
	}
	wg.Wait()
	if counts[0]+counts[1] != 1 {
		t.Fatalf("files written at 09:45 by the two processes: %v, want one in all", counts)
	}
	if b, _ := s.effective(t, first); b != "261103" {
		t.Errorf("a standard credit built Monday: batch effective %s, want 261103", b)
	}

	second := s.credit(t, "2.00", false)
	if files := s.tick(t, et(2026, 11, 2, 10, 30)); len(files) != 0 {
		t.Fatalf("between windows: %v", files)
	}
	// Down across 13:45 and 15:45: the 15:45 window is caught up once at 17:10.
	if files := s.tick(t, et(2026, 11, 2, 17, 10)); len(files) != 1 {
		t.Fatalf("catching up at 17:10: %v, want one file", files)
	}
	if files := s.tick(t, et(2026, 11, 2, 17, 11)); len(files) != 0 {
		t.Fatalf("a second tick after catching up: %v", files)
	}
	var windows []string
	if err := s.h.SQL().Select(&windows, `SELECT to_char(window_date, 'YYYY-MM-DD') || ' ' || window_time FROM ach_windows ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	if len(windows) != 2 || windows[0] != "2026-11-02 09:45" || windows[1] != "2026-11-02 15:45" {
		t.Errorf("claimed windows = %v", windows)
	}
	if _, p := s.effective(t, second); p["effective_date"] != "2026-11-03" || p["sent_at"] != "2026-11-02T22:10:00Z" {
		t.Errorf("the caught-up credit: effective %v, sent %v", p["effective_date"], p["sent_at"])
	}
	// The operator's originate still forces a file between windows.
	s.credit(t, "3.00", false)
	s.h.Clock.Set(et(2026, 11, 2, 18, 0))
	if files, err := s.o.Run(context.Background()); err != nil || len(files) != 1 {
		t.Errorf("ach originate between windows = %v, %v", files, err)
	}
}

// TestSameDayAtTheCutoff: a same-day credit made at 15:44 leaves in the
// 15:45 window effective that day, in a batch of its own beside a
// standard credit effective the next banking day; one made at 15:46
// leaves at 20:00 effective the next banking day.
func TestSameDayAtTheCutoff(t *testing.T) {
	t.Parallel()
	s := newWindowSetup(t)
	s.tick(t, et(2026, 11, 2, 13, 45))
	s.h.Clock.Set(et(2026, 11, 2, 15, 44))
	early, standard := s.credit(t, "5.00", true), s.credit(t, "6.00", false)
	if files := s.tick(t, et(2026, 11, 2, 15, 45).Add(30*time.Second)); len(files) != 1 {
		t.Fatalf("15:45 window: %v", files)
	}
	b, p := s.effective(t, early)
	if b != "261102" || p["effective_date"] != "2026-11-02" || p["settlement_date"] != "2026-11-02" ||
		p["sent_at"] != "2026-11-02T20:45:30Z" || p["return_window_closes_at"] != "2026-11-05T04:59:59Z" {
		t.Errorf("same-day credit at 15:44: batch %s, payment %s", b, th.MustJSON(p))
	}
	if p["unauthorized_return_window_closes_at"] != nil {
		t.Errorf("a credit has no unauthorized-return window: %v", p["unauthorized_return_window_closes_at"])
	}
	if b, p := s.effective(t, standard); b != "261103" || p["effective_date"] != "2026-11-03" {
		t.Errorf("standard credit at 15:44: batch %s, effective %v", b, p["effective_date"])
	}

	s.h.Clock.Set(et(2026, 11, 2, 15, 46))
	late := s.credit(t, "7.00", true)
	if files := s.tick(t, et(2026, 11, 2, 15, 46)); len(files) != 0 {
		t.Fatalf("15:46: %v", files)
	}
	s.tick(t, et(2026, 11, 2, 20, 0))
	if b, p := s.effective(t, late); b != "261103" || p["effective_date"] != "2026-11-03" {
		t.Errorf("same-day credit at 15:46: batch %s, effective %v", b, p["effective_date"])
	}
}

// TestFridayLastWindowMondayAndAHoliday: Friday's 20:00 window is past the
// cut-off, so its same-day entries are effective Monday, as are Monday's
// 09:45 ones; on a holiday nothing is built and the next banking day's
// first window takes what waited. An individual's debit carries its
// 60-day unauthorized-return window.
func TestFridayLastWindowMondayAndAHoliday(t *testing.T) {
	t.Parallel()
	s := newWindowSetup(t)
	s.tick(t, et(2026, 11, 6, 15, 45)) // Friday: the day's earlier windows are done
	s.h.Clock.Set(et(2026, 11, 6, 19, 59))
	friday := s.credit(t, "1.00", true)
	s.tick(t, et(2026, 11, 6, 20, 0))
	s.h.Clock.Set(et(2026, 11, 9, 9, 44))
	monday := s.credit(t, "2.00", true)
	s.tick(t, et(2026, 11, 9, 9, 45))
	for id, want := range map[string]string{friday: "261109", monday: "261109"} {
		if b, _ := s.effective(t, id); b != want {
			t.Errorf("%s: batch effective %s, want %s", id, b, want)
		}
	}

	s.tick(t, et(2026, 11, 10, 20, 0))
	s.h.Clock.Set(et(2026, 11, 11, 9, 0)) // Veterans Day
	debit := th.WantOK(t, s.h.Post("/v2/payments", s.key, th.DebitBody(s.src, `"25.00"`)))["payment_id"].(string)
	if files := s.tick(t, et(2026, 11, 11, 9, 45)); len(files) != 0 {
		t.Fatalf("on a holiday: %v", files)
	}
	if files := s.tick(t, et(2026, 11, 12, 9, 45)); len(files) != 1 {
		t.Fatalf("the next banking day's first window: %v", files)
	}
	if b, p := s.effective(t, debit); b != "261113" || p["settlement_date"] != "2026-11-13" ||
		p["return_window_closes_at"] != "2026-11-18T04:59:59Z" || p["unauthorized_return_window_closes_at"] != "2027-01-13T04:59:59Z" {
		t.Errorf("an individual's debit sent after the holiday: batch %s, payment %s", b, th.MustJSON(p))
	}
}

// TestSameDayReturnDeadlineCountsFromItsOwnDay: a same-day entry built
// Monday settles Monday, so a return dated Wednesday (the second banking
// day) applies and one dated Thursday is dishonored R68, though Thursday
// would be timely for the file's standard entries (effective Tuesday).
func TestSameDayReturnDeadlineCountsFromItsOwnDay(t *testing.T) {
	t.Parallel()
	s := newWindowSetup(t)
	s.tick(t, et(2026, 11, 2, 13, 45))
	s.h.Clock.Set(et(2026, 11, 2, 15, 0))
	onTime, late, standard := s.credit(t, "1.00", true), s.credit(t, "2.00", true), s.credit(t, "3.00", false)
	s.tick(t, et(2026, 11, 2, 15, 45))
	trace := func(id string) string {
		var tr string
		if err := s.h.SQL().Get(&tr, `SELECT trace_number FROM ach_entries WHERE payment_id = $1`, id); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	for _, c := range []struct {
		id, date            string
		applied, dishonored int
	}{
		{onTime, "261104", 1, 0},
		{late, "261105", 0, 1},
		{standard, "261105", 1, 0},
	} {
		file := dated(t, s.h.returnFile(t, map[string]string{trace(c.id): "R03"}), c.date)
		res, err := s.o.ImportReturns(context.Background(), bytes.NewReader(file))
		if err != nil || res.Applied != c.applied || res.Dishonored != c.dishonored {
			t.Errorf("return of %s dated %s = %+v, %v; want %d applied, %d dishonored", c.id, c.date, res, err, c.applied, c.dishonored)
		}
	}
}

// TestAFileLeftBuildingIsRedatedPastTheCutOffAndResentAsItsKeptBytes: a
// file whose delivery was lost (left building, as after a crash) goes out
// at the next window; by then, past the same-day cut-off, its same-day
// entry can no longer settle that day and is re-dated to the next banking
// day, its payment's dates with it, while the standard entry keeps its
// date. Lost again and delivered the same evening, it goes out as the very
// bytes kept the second time.
func TestAFileLeftBuildingIsRedatedPastTheCutOffAndResentAsItsKeptBytes(t *testing.T) {
	t.Parallel()
	s := newWindowSetup(t)
	s.tick(t, et(2026, 11, 2, 13, 45))
	s.h.Clock.Set(et(2026, 11, 2, 15, 0))
	sameDay := s.credit(t, "1.00", true)
	s.credit(t, "2.00", false)
	files := s.tick(t, et(2026, 11, 2, 15, 45))
	if len(files) != 1 {
		t.Fatalf("15:45 window: %v", files)
	}
	path := filepath.Join(s.dir, files[0])
	lose := func() {
		t.Helper()
		if _, err := s.h.SQL().Exec(`UPDATE ach_files SET status = 'building', written_at = NULL`); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	lose()
	if got := s.tick(t, et(2026, 11, 2, 17, 0)); len(got) != 0 {
		t.Fatalf("between windows: %v", got)
	}
	if got := s.tick(t, et(2026, 11, 2, 20, 0)); len(got) != 1 || got[0] != files[0] {
		t.Fatalf("the 20:00 window wrote %v, want %s again", got, files[0])
	}
	redated, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range readACH(t, s.dir)[files[0]].Batches {
		if d := b.GetHeader().EffectiveEntryDate; d != "261103" {
			t.Errorf("a batch of the re-dated file is effective %s, want 261103 for both entries", d)
		}
	}
	p := th.WantOK(t, s.h.Get("/v2/payments/"+sameDay, s.key))
	if p["effective_date"] != "2026-11-03" || p["settlement_date"] != "2026-11-03" || p["sent_at"] != "2026-11-03T01:00:00Z" {
		t.Errorf("the re-dated payment = effective %v, settlement %v, sent %v", p["effective_date"], p["settlement_date"], p["sent_at"])
	}
	var redatedAt *time.Time
	if err := s.h.SQL().Get(&redatedAt, `SELECT redated_at FROM ach_files`); err != nil || redatedAt == nil {
		t.Errorf("the file's redated_at = %v, %v", redatedAt, err)
	}

	lose()
	s.h.Clock.Set(et(2026, 11, 2, 20, 30))
	if got, err := s.o.Run(context.Background()); err != nil || len(got) != 1 {
		t.Fatalf("the operator's run at 20:30 = %v, %v", got, err)
	}
	again, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(redated, again) {
		t.Errorf("the file delivered again differs from the bytes kept:\n%s\n---\n%s", redated, again)
	}
	if raw, err := s.o.FileBytes(context.Background(), files[0]); err != nil || !bytes.Equal(raw, again) {
		t.Errorf("FileBytes = %d bytes, %v; want the delivered %d", len(raw), err, len(again))
	}
}
