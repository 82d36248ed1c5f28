package payment

// Where each money rule lives. A rule is decided in one place. Where SQL
// must decide it for atomicity (under the source's share lock and the
// originator's row lock, in the one statement that writes a payment), the
// statement reports the decision by name and Go only turns the name into
// the error (DebitOutcome.refusal); where Go decides, the SQL reads facts
// and decides nothing.
//
//   - Debit eligibility of a source (removed takes nothing; a debit needs
//     a Verified source no return blocked; a credit any live source): the
//     SQL fragment sourceRefusal of the postgres adapter, over its shared
//     src CTE (paymentSource), which Store.CreatePayment and
//     Store.CreateDebit decide by and Store.PaymentSource reports
//     (SourceInfo.DebitRefusal, CreditRefusal) to the payments written
//     from Go: a subscription and its debits (SourceInfo.allows) and a
//     re-presentment (retrySourceRefusal). Explained by sourceRefused.
//   - Departure (a pending payment may still leave: source live, not
//     blocked for a debit, mandate not revoked or used elsewhere):
//     Payment.refusal, over the Standing the claiming statement reads;
//     ReleaseTx adds the originator's state. A reversal is refused when
//     it is created by the same rule. An instant credit departs through
//     LeaveInstantTx, which applies ReleaseTx and ScreenEntryTx where the
//     credit leaves instead of where a file claims it.
//   - Limits (originator active, per-entry debit, daily debit and credit
//     totals): the SQL fragment originatorRefusal, decided under the
//     originator's row lock by the creating statements and reported by
//     Store.OriginatorTerms (Terms.Refusal) for a new subscription
//     (Terms.subscriptionRefusal); explained by Terms.refusal.
//   - SEC code of a new entry: EntrySEC, which the creating statements
//     take as parameters and pick from by the locked source's holder. A
//     debit's is its mandate's (mandates.sec_code), chosen once: by
//     Store.CreateDebit's decision, which judges the entry description by
//     it and writes it into a new mandate, or by Service.authorize for
//     a subscription's; ach.Classify reads it from the mandate and uses
//     EntrySEC only for entries without one (credits, and debits older
//     than mandates).
//   - Same Day ACH: sameDayAllowed.
//   - Entry description: its form, entryDescription; whether it fits an
//     entry, entryDescriptionRefusal, from which descriptionFits derives
//     the SEC codes the creating statements accept; what the batch
//     carries, BatchDescription.
//   - Purposes: ParsePurpose; the default, purposeOr; the descriptions a
//     purpose fixes, FixedDescription.
//   - Mandates (a named mandate authorizes only its own source's debits,
//     only while active, a subscription only when recurring, and a single
//     one only one debit): the SQL fragment mandateRefusal of the postgres
//     adapter, decided with the mandate locked by Store.CreateDebit and
//     reported by Store.MandateForUse to a subscription (useMandate);
//     explained by mandateRefused.
//   - Reinitiation (a debit after an R01/R09 return): CreateDebit's
//     returned CTE within reinitiationBounds, explained by
//     Returned.refusal.
//   - Deadlines: the return deadline, ach.ReturnDeadline (ach.Timely);
//     the dishonor deadline, ach.DishonorDeadline (ach.DishonorInTime);
//     the reversal window, ReversalLastDay and ReversalLeaves at creation
//     and reversalClosed as it leaves; the re-presentment window,
//     RetryWindow.
//   - Fraud rules: matches, over the RiskFacts judge reads; the return
//     rates' hold, recomputeGuardrail.
//   - Screening: a name against the list, sanctions.List.Of; a payment's
//     customer as it leaves, screenTx; an entry's receiver name and a
//     micro-deposit's wait, ScreenEntryTx.
//   - Matching a bank's answer to the entry it answers: ach.MatchEntry.
