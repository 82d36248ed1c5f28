package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/testclock"
)

// The work a job claims (payments to send or settle, deposits to send or
// expire, subscriptions due, files to deliver, windows to build) is the
// work of one clock: the wall clock's when the job's context has no test
// clock, the test clock's when an advance runs it on one
// (internal/core/testclock). Each claiming statement takes the clock as a
// parameter (NULL: the wall clock) and keeps to its rows with clockRows, so
// a wall-clock job never touches a clock's customers and an advance
// touches nothing else. A customer's clock is set when it is created and
// never changes, so the statements read it from the customer's row.
//
// The merchant's money is read the same way (ledgerClock): the ledger and
// the balances summed from it are one clock's, the wall clock's leaving
// out every clock's customers, whose money belongs to their clock's time.

// clockParam is the test clock of ctx as a statement parameter: NULL on
// the wall clock.
func clockParam(ctx context.Context) sql.NullString {
	id := testclock.ID(ctx)
	return sql.NullString{String: id, Valid: id != ""}
}

// clockRows is the predicate keeping a row of alias a, whose customer is
// the expression customer, to the clock of parameter $n.
func clockRows(a, customer string, n int) string {
	return fmt.Sprintf(`(SELECT c.test_clock_id FROM customers c
   WHERE c.merchant_id = %[1]s.merchant_id AND c.environment = %[1]s.environment AND c.id = %[2]s) IS NOT DISTINCT FROM $%[3]d::text`,
		a, customer, n)
}

// ledgerClock keeps a payment of alias p, a line of the merchant's ledger
// or a figure of its balances, to the clock of parameter $3: the one
// predicate of every part of the statements that read them (balanceLines,
// balances).
var ledgerClock = clockRows("p", "p.customer_id", 3)

// sourceClockRows is clockRows for a row of alias a naming its funding
// source.
func sourceClockRows(a string, n int) string {
	return fmt.Sprintf(`(SELECT c.test_clock_id FROM funding_sources fs
   JOIN customers c ON c.merchant_id = fs.merchant_id AND c.environment = fs.environment AND c.id = fs.customer_id
   WHERE fs.merchant_id = %[1]s.merchant_id AND fs.environment = %[1]s.environment AND fs.id = %[1]s.funding_source_id) IS NOT DISTINCT FROM $%[2]d::text`,
		a, n)
}

// fileClockRows keeps a row naming an ACH file by the column fileID to the
// clock of parameter $n.
func fileClockRows(fileID string, n int) string {
	return fmt.Sprintf(`(SELECT af.test_clock_id FROM ach_files af WHERE af.id = %s) IS NOT DISTINCT FROM $%d::text`, fileID, n)
}

// clockFileLease is the lease a clock's file is written with: no release
// that does not know clocks can claim it for its bank (its claim waits
// for a lease that never ends), and a clock's own delivery takes it
// (claimACHFile).
const clockFileLease = "test_clock"
