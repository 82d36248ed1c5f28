package ach

import (
	"context"
	"fmt"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/payment"
)

// DescriptionReversal describes the batch of reversals: entries that undo
// an erroneous entry with the opposite one.
const DescriptionReversal = "REVERSAL"

// classOf is the class of payment p's entry and the company (name, id)
// it goes out under; company is the originator's current one. A reversal
// and a re-presentment go as the entry they follow went: under its SEC
// code, payment type, company name and company id (NACHA: they are that
// entry corrected or presented again, so the receiver's bank must see the
// same originator, whatever the originator's settings are now), only
// described REVERSAL or RETRY PYMT. A re-presentment whose original went
// in no file here (it cannot have come back then) is classified afresh.
// Every other payment is classified by Classify.
func (o *Originator) classOf(ctx context.Context, tx Store, p payment.Payment, payer Payer, company [2]string) (Class, [2]string, error) {
	of, description := p.ReversalOf, DescriptionReversal
	if of == nil {
		of, description = p.RetryOf, DescriptionRetry
	}
	if of == nil {
		return Classify(payer), company, nil
	}
	e, err := tx.PaymentEntry(ctx, p.Scope, *of)
	switch {
	case errs.Is(err, errs.NotFound) && p.ReversalOf == nil:
		return Classify(payer), company, nil
	case err != nil:
		return Class{}, company, fmt.Errorf("classify %s after the entry of %s: %w", p.ID, *of, err)
	}
	c := e.Class
	c.Description = description
	return c, [2]string{e.CompanyName, e.CompanyID}, nil
}

// sameReceiver gives a reversal the receiver name and Individual
// Identification Number of the entry it reverses, as NACHA requires, even
// when a notification of change corrected the source's since.
func (o *Originator) sameReceiver(ctx context.Context, tx Store, p payment.Payment, e *Entry) error {
	if p.ReversalOf == nil {
		return nil
	}
	orig, err := tx.PaymentEntry(ctx, p.Scope, *p.ReversalOf)
	if err != nil {
		return err
	}
	if orig.ReceiverName != "" {
		e.ReceiverName, e.IndividualID = orig.ReceiverName, orig.IndividualID
	}
	return nil
}
