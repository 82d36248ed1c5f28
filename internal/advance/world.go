package advance

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/ach"
	"github.com/fundsource/fundsource/internal/consequence"
	"github.com/fundsource/fundsource/internal/core/calendar"
	"github.com/fundsource/fundsource/internal/core/testclock"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
)

// Bank is a clock's simulated bank.
type Bank interface {
	// Step reads the files the originator delivered and leaves the
	// answers due by date (a banking day's; nothing on another day).
	Step(ctx context.Context, date calendar.Date) error
}

// Production is the production service's jobs, as World: a clock's own
// ACH originator and simulated bank, and the shared services (which keep
// to the step's clock by its context).
type Production struct {
	Originator   *ach.Originator
	Bank         Bank
	Funding      *funding.Service
	Payments     *payment.Service
	Consequences *consequence.Service
}

// Morning: the bank's answers due by today, imported; expiries;
// subscriptions due.
func (p Production) Morning(ctx context.Context) error {
	if err := p.answers(ctx); err != nil {
		return err
	}
	if _, err := p.Funding.ExpireDue(ctx); err != nil {
		return fmt.Errorf("expire micro-deposits: %w", err)
	}
	if _, err := p.Payments.RunDue(ctx); err != nil {
		return fmt.Errorf("run subscriptions due: %w", err)
	}
	return nil
}

// Window builds and delivers the window due now; the bank reads the file
// as the network does, the day it comes (its settlement date is its
// effective date, not the next day's morning), and what it answers at
// once is imported.
func (p Production) Window(ctx context.Context) error {
	if _, err := p.Originator.Tick(ctx); err != nil {
		return fmt.Errorf("build the ACH window: %w", err)
	}
	return p.answers(ctx)
}

// answers is the bank's day so far, and its answers imported.
func (p Production) answers(ctx context.Context) error {
	c, _ := testclock.From(ctx)
	if err := p.Bank.Step(ctx, calendar.DateOf(c.Now)); err != nil {
		return fmt.Errorf("the simulated bank's day: %w", err)
	}
	if _, err := p.Originator.Poll(ctx); err != nil {
		return fmt.Errorf("import the bank's answers: %w", err)
	}
	return nil
}

// Settle settles what is due, and sends instant credits due.
func (p Production) Settle(ctx context.Context) error {
	if _, err := p.Consequences.SettleDue(ctx); err != nil {
		return fmt.Errorf("settle payments: %w", err)
	}
	if _, err := p.Consequences.ResolveInstant(ctx); err != nil {
		return fmt.Errorf("send instant credits: %w", err)
	}
	return nil
}

// ClockODFI is the routing number of a test clock's bank: the ODFI and
// the destination of its files. It is no bank's (80 is the traveler's
// checks prefix, which no ACH entry is addressed to), so a clock's
// entries and answers can never be taken for the service's real bank's.
const ClockODFI = "800000006"

// ACHConfig is a clock's originator's configuration: production's with
// schedule and sameDayMicro, addressed to the clock's bank, which sends
// no statements.
func ACHConfig(schedule calendar.Schedule, sameDayMicro bool) ach.Config {
	return ach.Config{Dir: "-", ODFIRouting: ClockODFI, DestinationRouting: ClockODFI,
		DestinationName: "FUNDSOURCE SANDBOX BANK", OriginName: "FUNDSOURCE SANDBOX", CompanyName: "FUNDSOURCE",
		CompanyID: "9800000006", Schedule: schedule, SameDayMicro: sameDayMicro, NoStatements: true}
}
