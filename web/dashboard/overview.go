package dashboard

import (
	"cmp"
	"fmt"
	"time"

	"github.com/fundsource/fundsource/internal/overview"
	view "github.com/fundsource/fundsource/templates/dashboard"
)

// methodWords are the verification methods as the funnels' captions say them.
var methodWords = map[string]string{overview.AtCreation: "at creation"}

// charts lays out the overview's charts: bar sizes in the SVG boxes of the
// templates, and every figure in words for the tables and titles.
func charts(st overview.Stats) *view.Charts {
	c := &view.Charts{}
	for _, f := range st.Funnels {
		fc := view.FunnelChart{ID: f.Method, Method: cmp.Or(methodWords[f.Method], f.Method), Median: "—"}
		if f.Verified > 0 {
			fc.Median = duration(f.MedianToVerify)
		}
		for i, step := range []struct {
			label string
			n     int
		}{{"created", f.Created}, {"initiated", f.Initiated}, {"verified", f.Verified}} {
			w := 0
			if f.Created > 0 {
				w = step.n * view.FunnelWidth / f.Created
			}
			fc.Steps = append(fc.Steps, view.Bar{Label: step.label, Count: step.n, Width: w, Y: i * 28})
		}
		c.Funnels = append(c.Funnels, fc)
	}
	rate := func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }
	c.Series = append(c.Series,
		series("webhook-success", "Webhook delivery success rate by day", "Delivered (2xx) of attempts", st.Days,
			func(d overview.Day) (float64, bool) { return d.DeliveryRate, d.HasWebhook },
			func(d overview.Day) string {
				return fmt.Sprintf("%s (%d of %d)", rate(d.DeliveryRate), d.Delivered, d.Attempts)
			}, 1),
		series("webhook-latency", "Webhook p95 latency by day", "p95 latency", st.Days,
			func(d overview.Day) (float64, bool) { return float64(d.P95LatencyMS), d.HasWebhook },
			func(d overview.Day) string { return fmt.Sprintf("%d ms", d.P95LatencyMS) }, 0),
		debitReturns(st.Days, rate),
	)
	return c
}

// debitReturns is the daily debit return rate, its summary the window's
// total as the return-rate table counts it (by the debits created in the
// window, held and canceled ones not counted), so the two agree while the
// table's longer window holds no older debits.
func debitReturns(days []overview.Day, rate func(float64) string) view.Series {
	s := series("debit-returns", "Debit return rate by day · last 30 days", "Returned of debits created that day", days,
		func(d overview.Day) (float64, bool) { return d.DebitReturnRate, d.HasDebits },
		func(d overview.Day) string {
			return fmt.Sprintf("%s (%d of %d)", rate(d.DebitReturnRate), d.Returned, d.Debits)
		}, 1)
	debits, returned := 0, 0
	for _, d := range days {
		debits, returned = debits+d.Debits, returned+d.Returned
	}
	if debits > 0 {
		s.Summary = fmt.Sprintf("Debit returns in the last 30 days: %.2f%%, %d of %d debits, by the day each debit was created. "+
			"The return-rate table counts the last 60 days.", float64(returned)*100/float64(debits), returned, debits)
	}
	return s
}

// series is one daily chart: value gives a day's figure and whether the
// day had any; label the figure in words; top is the scale's top (0: the
// largest value).
func series(id, title, column string, days []overview.Day, value func(overview.Day) (float64, bool),
	label func(overview.Day) string, top float64) view.Series {
	s := view.Series{ID: id, Title: title, Column: column}
	if top == 0 {
		for _, d := range days {
			if v, ok := value(d); ok && v > top {
				top = v
			}
		}
	}
	const width, height = 600, 120
	slot := width / len(days)
	with, last := 0, ""
	for i, d := range days {
		p := view.Point{Date: d.Date.Format("Jan 2"), Value: "—", X: i*slot + 2, W: slot - 4}
		if v, ok := value(d); ok {
			with++
			p.Has, p.Value, last = true, label(d), label(d)
			if top > 0 {
				p.H = max(int(v/top*height), 1)
			} else {
				p.H = 1
			}
			p.Y = height - p.H
		}
		s.Points = append(s.Points, p)
	}
	if with == 0 {
		s.Summary = title + ": no data in the last 30 days."
	} else {
		s.Summary = fmt.Sprintf("%s: %d of the last 30 days have data; the latest: %s.", title, with, last)
	}
	return s
}

// duration is a time to verify for people: "3 s", "42 min", "2.5 h", "3.1 days".
func duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1f h", d.Hours())
	}
	return fmt.Sprintf("%.1f days", d.Hours()/24)
}
