package ach

import (
	"context"

	"github.com/fundsource/fundsource/internal/payment"
)

// DescriptionReversal describes the batch of reversals: entries that undo
// an erroneous entry with the opposite one.
const DescriptionReversal = "REVERSAL"

// classOf is the class of payment p's entry. A reversal goes as the entry
// it reverses went, under the same SEC code and payment type (NACHA), only
// described REVERSAL; every other payment is classified by Classify.
func (o *Originator) classOf(ctx context.Context, tx Store, p payment.Payment, payer Payer) (Class, error) {
	if p.ReversalOf == nil {
		return Classify(payer), nil
	}
	e, err := tx.PaymentEntry(ctx, p.Scope, *p.ReversalOf)
	if err != nil {
		return Class{}, err
	}
	c := e.Class
	if c == (Class{}) {
		c = legacyClass(e)
	}
	c.Description = DescriptionReversal
	return c, nil
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
