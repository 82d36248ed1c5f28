package ach

// Standard entry class codes the originator uses.
const (
	SecPPD = "PPD" // prearranged payment: credits to consumers
	SecCCD = "CCD" // corporate: entries to and from businesses
	SecWEB = "WEB" // internet-initiated: debits authorized online by consumers
)

// Company entry descriptions of the batches.
const (
	DescriptionMicroDeposits = "ACCTVERIFY" // micro-deposit credits and their offset
	DescriptionPurchase      = "PURCHASE"   // a consumer's debit for goods or services
	DescriptionRetry         = "RETRY PYMT" // a debit presented again after R01 or R09
	DescriptionPayments      = "PAYMENT"    // every other payment
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
	// EntryDescription is the payment's own company entry description
	// ("" for the default), which payment.CheckEntryDescription allowed.
	EntryDescription string
}

// Classify is the rule for SEC codes and descriptions. A debit under a
// mandate goes out under the mandate's SEC code, the class the customer
// authorized (a WEB debit keeps the consumer's 60-day window for
// unauthorized returns). Otherwise a company's
// entries are CCD; a consumer's debit was authorized online, so it is WEB,
// described PURCHASE (NACHA's description for consumer purchase debits
// from March 20, 2026), with payment type R when it is a subscription's; a
// consumer's credit is PPD. A re-presentment keeps its SEC code and is
// described RETRY PYMT, as NACHA requires. Micro-deposits are ACCTVERIFY,
// to a business as CCD and to a consumer as PPD. A payment's own entry
// description replaces PAYMENT or PURCHASE (the payment service allowed it
// only where NACHA leaves the choice to the originator), never RETRY
// PYMT.
func Classify(p Payer) Class {
	sec := SecPPD
	switch {
	case p.Debit && !p.MicroDeposit && p.MandateSEC != "":
		sec = p.MandateSEC
	case p.Business:
		sec = SecCCD
	case p.Debit && !p.MicroDeposit:
		sec = SecWEB
	}
	c := Class{SEC: sec, Description: DescriptionPayments}
	switch {
	case p.MicroDeposit:
		c.Description = DescriptionMicroDeposits
	case p.Debit && p.Retry:
		c.Description = DescriptionRetry
	case p.EntryDescription != "":
		c.Description = p.EntryDescription
	case p.Debit && sec == SecWEB:
		c.Description = DescriptionPurchase
	}
	if sec == SecWEB {
		c.PaymentType = "S"
		if p.Subscription {
			c.PaymentType = "R"
		}
	}
	return c
}

// legacyClass is the class of an entry stored without one: it goes in a
// PPD batch, described ACCTVERIFY or PAYMENT.
func legacyClass(e Entry) Class {
	if e.Kind == KindMicroDeposit {
		return Class{SEC: SecPPD, Description: DescriptionMicroDeposits}
	}
	return Class{SEC: SecPPD, Description: DescriptionPayments}
}
