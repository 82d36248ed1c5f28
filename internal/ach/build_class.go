package ach

import "github.com/fundsource/fundsource/internal/payment"

// Standard entry class codes the originator uses.
const (
	SecPPD = "PPD" // prearranged payment: credits to consumers
	SecCCD = "CCD" // corporate: entries to and from businesses
	SecWEB = "WEB" // internet-initiated: debits authorized online by consumers
)

// Company entry descriptions of the batches.
const (
	DescriptionMicroDeposits = "ACCTVERIFY"          // micro-deposit credits and their offset
	DescriptionPurchase      = payment.EntryPurchase // a consumer's WEB debit for goods
	DescriptionRetry         = "RETRY PYMT"          // a debit presented again after R01 or R09
	DescriptionPayroll       = payment.EntryPayroll  // a payroll credit to a consumer (PPD)
	DescriptionPayments      = payment.EntryPayment  // every other payment
)

// Class is how an entry goes to the bank: the SEC code and company entry
// description of its batch and, for a WEB debit, its payment type (R for a
// recurring authorization, S for a single one).
type Class struct {
	SEC         string
	Description string
	PaymentType string // "" unless SEC is WEB
}

// Payer is what the class of an entry depends on.
type Payer struct {
	Business     bool // the account's holder is a company (account_holder_type)
	Debit        bool
	MicroDeposit bool
	Subscription bool // a subscription's debit
	Retry        bool // a re-presentment (attempt 2 or 3)
	// MandateSEC is the SEC code of the mandate a debit goes out under
	// ("" for none): the customer authorized that class of entry, whatever
	// the source's account_holder_type says since.
	MandateSEC string
	// Purpose is what the payment is for, which decides the descriptions
	// NACHA fixes (payment.FixedDescription).
	Purpose payment.Purpose
	// EntryDescription is the payment's own company entry description
	// ("" for the default), which the payment service allowed for its
	// SEC code and purpose.
	EntryDescription string
}

// Classify is the class of an entry as it is written. Its SEC code is
// payment.EntrySEC's, the rule's one home (CCD for a company's entries,
// WEB for a consumer's debit, authorized online, PPD for a consumer's
// credit), with two facts of the entry over it: a debit under a mandate
// goes out under the mandate's SEC code, the class the customer
// authorized (a WEB debit keeps the consumer's 60-day window for
// unauthorized returns), and a micro-deposit is the credit it is. A WEB
// debit has payment type R when it is a subscription's. A re-presentment
// keeps its SEC code and is described RETRY PYMT, as NACHA requires.
// Micro-deposits are ACCTVERIFY. Every other entry is described as its
// SEC code and purpose fix it (PURCHASE for a WEB debit for goods,
// PAYROLL for a PPD credit for payroll), else by the payment's own entry
// description, else PAYMENT (payment.BatchDescription).
func Classify(p Payer) Class {
	dir := payment.Credit
	if p.Debit && !p.MicroDeposit {
		dir = payment.Debit
	}
	sec := payment.EntrySEC(dir, p.Business)
	if dir == payment.Debit && p.MandateSEC != "" {
		sec = p.MandateSEC
	}
	c := Class{SEC: sec}
	switch {
	case p.MicroDeposit:
		c.Description = DescriptionMicroDeposits
	case p.Debit && p.Retry:
		c.Description = DescriptionRetry
	default:
		c.Description = payment.BatchDescription(sec, dir, p.Purpose, p.EntryDescription)
	}
	if sec == SecWEB {
		c.PaymentType = "S"
		if p.Subscription {
			c.PaymentType = "R"
		}
	}
	return c
}
