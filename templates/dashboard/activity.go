package dashboard

// The views of the activity pages: payments, subscriptions, events and API
// requests, each a list with filters and a search by id.

// ActivityFilters are a list's search box and selects as the merchant set them.
type ActivityFilters struct {
	Query   string   // the id searched for
	Error   string   // an unknown filter value, said so
	Selects []Select // the status, direction, type or method choices
}

// Select is one filter select of a list.
type Select struct {
	Name, Label, Value string
	Options            []Option
}

// Active reports whether the list is narrowed by a search or a select.
func (f ActivityFilters) Active() bool {
	if f.Query != "" {
		return true
	}
	for _, s := range f.Selects {
		if s.Value != "" {
			return true
		}
	}
	return false
}

// Payments is the payment list.
type Payments struct {
	Filters ActivityFilters
	Source  string // the funding source the list is narrowed to, "" for all
	Rows    []PaymentListRow
	Page    Pager
	// Balances are the environment's, shown above the list; nil: none.
	Balances *Balances
	// Unmatched are the bank's answers that named the merchant's company
	// but matched none of its payments, waiting for an operator.
	Unmatched []BankAnswer
	// SettlementDate is the day the settlements download offers first
	// (today, US Eastern), YYYY-MM-DD.
	SettlementDate string
}

// BankAnswer is an answer from the bank kept unmatched, as the merchant
// sees it (the account by its last four only).
type BankAnswer struct {
	OriginalTrace string
	Answer        string // "Return R01", "Notification of change C01"
	Amount        string // "$40.00"; "" for a notification of change
	Last4         string
	Arrived       string // "Nov 5, 2026"
}

// PaymentListRow is one payment in the list.
type PaymentListRow struct {
	PaymentRow
	SourceID string
	Party
	Description string
	Code        string   // the return code of a failed payment, "" otherwise
	Marks       []string // "reversed", "reversal", "retry, attempt 2"
}

// Party names a payment's or an event's customer and bank account for
// people; empty when the source is unknown (another environment's).
type Party struct {
	CustomerID, Customer string
	Bank, Account        string // "JPMorgan Chase Bank", "Checking •••• 6789"
	// Sanctions: the customer's name resembles one on the SDN list
	// (a potential match not yet cleared).
	Sanctions bool
}

// Payment is one payment's page.
type Payment struct {
	PaymentRow
	SourceID       string
	CustomerID     string
	Description    string
	Purpose        string // goods, services, bill, donation, payroll, other
	SubscriptionID string
	Settled        string // "" while pending
	// RetryOf is the original debit this one presents again, "" when it
	// is none; Retries are the original's re-presentments, newest last.
	RetryOf string
	Retries []PaymentLink
	// ReversalOf is the payment this one reverses, "" when it is none;
	// Reversal is this payment's reversal, nil while it is not reversed.
	ReversalOf string
	Reversal   *ReversalView
	// Rail is how it went ("Instant (RTP)", "ACH, same day"), with why an
	// auto credit did not go instant ("" when it did or was not asked).
	Rail, Fallback string
	// RailStatus is where an instant credit stands on its rail, in words
	// ("" for one not on an instant rail).
	RailStatus string
	// Trace is its ACH entry's trace number once the bank took the file.
	Trace string
	// RefundOf is the debit this refund pays back, ""; Refunded is what
	// refunds of this debit pay back ("" when none).
	RefundOf, Refunded string
	// Finality is when it left and until when it may come back.
	Finality Finality
	// Actions are the forms the payment's state allows.
	Actions PaymentActions
	Party
}

// PaymentActions are what a merchant may do with a payment from its page,
// each a form posted to the service method the API calls; the service
// still decides, and its refusal is shown as the API words it.
type PaymentActions struct {
	Cancel  bool // held or pending, not in a production file, an instant credit not sent
	Retry   bool // a failed one-off debit returned R01 or R09
	Reverse bool // left, not a reversal, not reversed, within the window, not instant
	Return  bool // sandbox: pending or processed, not instant
	// ReverseReasons and ReturnCodes are the selects' options.
	ReverseReasons, ReturnCodes []Option
}

// Any reports whether some action applies.
func (a PaymentActions) Any() bool { return a.Cancel || a.Retry || a.Reverse || a.Return }

// PaymentLink names another payment of the page: its id, status and what
// it is ("attempt 2").
type PaymentLink struct {
	ID, Status, Label string
}

// ReversalView is how a payment was reversed.
type ReversalView struct {
	PaymentID string
	Reason    string // "wrong amount"
	Created   string
}

// Subscriptions is the subscription list.
type Subscriptions struct {
	Filters ActivityFilters
	Rows    []SubscriptionListRow
	Page    Pager
}

// SubscriptionListRow is one subscription in the list.
type SubscriptionListRow struct {
	SubscriptionRow
	SourceID string
	Created  string
}

// Events is the event list.
type Events struct {
	Filters ActivityFilters
	Rows    []LogRow
	Page    Pager
}

// Requests is the API request log.
type Requests struct {
	Filters ActivityFilters
	Rows    []RequestRow
	Page    Pager
	Dropped int64 // entries this process dropped under overload
}

// RequestRow is one API request.
type RequestRow struct {
	ID, Time, Method, Path, Status, Latency string
	OK                                      bool // 2xx
}

// Charts are the Home page's charts over the last 30 days, drawn as SVG on
// the server, each with its numbers in a table.
type Charts struct {
	Funnels []FunnelChart
	Series  []Series
}

// FunnelChart is one verification method's funnel: created, initiated,
// verified, each a bar as wide as its share of created.
type FunnelChart struct {
	ID     string // the method's name in element ids
	Method string // the method in words
	Median string // median time to verify, "—" when none verified
	Steps  []Bar
}

// Bar is one bar of a funnel.
type Bar struct {
	Label string
	Count int
	Width int // px of FunnelWidth
	Y     int
}

// FunnelWidth is the width of a funnel's longest bar.
const FunnelWidth = 300

// Series is one daily chart.
type Series struct {
	ID      string // the element id
	Title   string
	Summary string // the chart in one sentence, for people who cannot see it
	Column  string // the table's value column
	Points  []Point
}

// Point is one day's bar of a daily chart.
type Point struct {
	Date  string // "Nov 2"
	Value string // "98%", "120 ms" or "—" when the day had none
	X, Y  int    // the bar's top-left corner in the chart's 600×120 box
	W, H  int
	Has   bool
}
