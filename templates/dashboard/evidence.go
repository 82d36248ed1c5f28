package dashboard

// Evidence is a payment's printable authorization evidence: the same facts
// as GET /v2/payments/{id}/evidence, in words.
type Evidence struct {
	PaymentID   string
	Summary     string // "A debit of $12.34 from …"
	Status      string
	Failure     string // "R10 …", "" when none
	Description string
	Created     string
	Settled     string
	// Rail is how it went ("Instant (RTP)", "ACH"), with why an auto
	// credit did not go instant ("" when it did or was not asked).
	Rail, Fallback string

	Mandate *EvidenceMandate // nil for a credit
	// Clock is the test clock the customer lives on; nil on the wall clock.
	Clock *ClockMark

	SourceID     string
	Account      string // "Checking account ending 6789 at …"
	Holder       string // "an individual, Jane Doe"
	Verification string // "Verified by micro-deposits on …", or why not
	Check        string // the account check's result
	CheckReasons []string
	Ownership    string // "" when there was no ownership check

	Events []EvidenceEvent
}

// EvidenceMandate is the authorization as the customer accepted it.
type EvidenceMandate struct {
	ID         string
	Kind       string // what its type covers, in words
	Accepted   string // when
	IPAddress  string // "" when none was recorded
	UserAgent  string
	Text       string
	TextSHA256 string
	Standing   string // in force, or revoked when and why
	Sandbox    bool   // the sandbox's own, not a customer's consent
}

// EvidenceEvent is one security-log event about the payment, its mandate
// or its source.
type EvidenceEvent struct {
	At      string
	Action  string
	Actor   string
	Details string
}
