// Package dashboard holds the templ components of the merchant dashboard.
// Every view carries display-ready, masked values: last four digits, never
// an account number; a secret key only on the one page that shows it once.
package dashboard

import (
	"strings"

	"github.com/a-h/templ"
)

// Frame is what every signed-in page shows around its content.
type Frame struct {
	Title         string
	Section       string // the nav entry to mark: overview, customers, sources, payments, subscriptions, events, requests, webhooks, test-clocks or settings
	Merchant      string // the merchant's name
	Email         string // the signed-in login
	Env           string // sandbox or production
	CanProduction bool   // an operator activated production
	Path          string // this page's path and query, where the environment switch comes back to
	Notices       []string
	Errors        []string
}

// Live reports whether the page shows production data.
func (f Frame) Live() bool { return f.Env == "production" }

// EnvLabel is "Sandbox" or "Production".
func (f Frame) EnvLabel() string {
	if f.Live() {
		return "Production"
	}
	return "Sandbox"
}

// AuthForm is the sign-up or sign-in form as typed (never the password).
type AuthForm struct {
	Name       string
	Email      string
	Next       string // where to go after signing in
	Notice     string // e.g. "You have been signed out."
	Error      string
	ErrorField string // name, email or password when Error is about one field
}

// Overview is the home page: keys and the first steps.
type Overview struct {
	APIBase     string // the environment's API address
	PublicKey   string
	SecretHint  string // "sk_test_…abcd"
	KeyCreated  string
	NewSecret   string // the secret key, on the one page that shows it once; else ""
	HasWebhook  bool
	HasCustomer bool
	HasSource   bool
	Charts      *Charts      // nil: no overview
	ReturnRates []ReturnRate // unauthorized, administrative, overall
	Balances    *Balances    // nil: not shown
	// Held counts the payments held for review ("100+" past a hundred);
	// "" when none.
	Held string
	// ReversedThenReturned counts the payments that came back, over 30
	// days, after their reversal had left (the reversal_then_return
	// alert): the customer may have been paid back twice. "" when none.
	ReversedThenReturned string
	// RefundedThenReturned counts the debits returned as unauthorized,
	// over 30 days, after a refund of them had left (the
	// refund_then_return alert). "" when none.
	RefundedThenReturned string
	// RateBanner names the return rates at or past half their threshold
	// once at least 20 debits count ("" for none); DebitsHeld: one is past
	// its threshold, so new debits are held.
	RateBanner string
	DebitsHeld bool
}

// ReturnRate is one debit return rate against its threshold, as shown.
type ReturnRate struct {
	Name      string // "Unauthorized (R05 R07 R10 R11 R29 R51)"
	Rate      string // "0.40%"
	Counts    string // "2 of 500 debits"
	Threshold string // "0.5%"
	// Level is "ok", "warning" (from half the threshold), "exceeded", or
	// "too_few" while the window holds too few debits for a rate to count.
	Level  string
	TooFew string // "Not enough debits yet (7 of 20)"
}

// Webhooks is the webhook page: the endpoint and the delivery log.
type Webhooks struct {
	URL             string // registered URL, "" when none
	Typed           string // the URL as typed after a refused change
	Error           string
	Secret          string // shown only after Reveal or Roll
	PreviousExpires string // when the secret before the last roll stops signing; "" if none
	Status          string // enabled, backing_off or disabled ("" without a URL)
	Failures        int    // failed attempts in a row
	DisabledAt      string // when the endpoint was disabled; "" while enabled
	Log             []LogRow
	Page            Pager
}

// LogRow is one event in the delivery log.
type LogRow struct {
	ID   string
	Type string
	// About names whom an event is about for people: the customer and
	// bank account of its funding source, and its amount ("" when none).
	About    string
	Time     string
	State    string // delivered, retrying, pending, failed, canceled, not sent
	Attempts int
	Code     string // last response status, "—" when none
	Latency  string // "123 ms", "" when no attempt
	// Clock is the test clock the event happened on, at the clock's time
	// then; nil on the wall clock.
	Clock *ClockMark
}

// Event is one event's page: payload and every delivery attempt.
type Event struct {
	ID         string
	Type       string
	Time       string
	Payload    string // indented JSON
	Deliveries []Delivery
	CanResend  bool // a webhook URL is registered
	// Clock is the test clock the event happened on, at the clock's time
	// then; nil on the wall clock.
	Clock *ClockMark
}

// Delivery is one delivery of an event.
type Delivery struct {
	ID       string
	State    string
	Next     string // next attempt time while retrying
	Attempts []Attempt
}

// Attempt is one HTTP POST of a delivery.
type Attempt struct {
	Time    string
	URL     string
	Code    string // "—" when no response came
	Latency string
	Error   string
	Body    string // the first KiB of the response
}

// Pager links the pages of a list; keyset pagination goes forward only.
type Pager struct {
	Next  string // address of the next page, "" on the last
	First string // address of the first page, "" on the first
}

// Customers is the customer list.
type Customers struct {
	Query string
	Rows  []CustomerRow
	Page  Pager
}

// CustomerRow is one customer in a list.
type CustomerRow struct {
	ID      string
	Name    string
	Email   string
	Created string
	// Sanctions: the name resembles one on OFAC's SDN list, a potential
	// match the platform has not cleared; Cleared: it cleared one.
	Sanctions, Cleared bool
	Matched            string // the listed name it resembles
	// Clock is the test clock the customer lives on; nil on the wall clock.
	Clock *ClockMark
}

// Customer is one customer's page.
type Customer struct {
	CustomerRow
	Business string
	Sources  []SourceRow
	// Payments are the customer's newest payments, of every source;
	// MorePayments says older ones exist.
	Payments      []PaymentListRow
	MorePayments  bool
	Subscriptions []SubscriptionListRow
}

// Sources is the funding-source list.
type Sources struct {
	Query    string
	Status   string
	Error    string // an unknown status filter, said so
	Statuses []Option
	Rows     []SourceRow
	Page     Pager
}

// Option is one choice of a select.
type Option struct {
	Value string
	Label string
}

// SourceRow is one funding source in a list.
type SourceRow struct {
	ID       string
	Customer string // name
	Email    string
	Bank     string
	Account  string // "Checking •••• 6789"
	Nickname string
	Status   string // Verified, Unverified, Pending, Removed
	Created  string
	// Clock is the test clock its customer lives on; nil on the wall clock.
	Clock *ClockMark
}

// Source is one funding source's page.
type Source struct {
	SourceRow
	CustomerID string
	// Clock is the test clock its customer lives on; nil on the wall clock.
	Clock        *ClockMark
	Removed      bool
	Verification string // none, pending, succeeded, failed or expired
	Initiated    string
	Arrival      string
	Expires      string // when it expires, or when it expired (the API's expires_at)
	Attempts     int
	ReturnCode   string
	Method       string // micro_deposits or instant
	Rail         string // instant: RTP or FedNow
	RailUnknown  bool   // instant: the rail's answer could not be read
	FailureCode  string // instant: the rail's refusal (AC03, AC04, AC06)
	CanInitiate  bool
	HostedLink   string // "" unless a customer can verify there now
	Amounts      string // sandbox only: "$0.12 and $0.34" while pending
	Code         string // sandbox only: an instant verification's code while pending
	// Blocked describes a return's block ("R07 Authorization revoked by
	// customer, since …"), "" when debits are allowed.
	Blocked       string
	RemovedReason string // "return_R03" when a return removed the source
	// Check is the account check's result (pass, caution, fail,
	// unknown) and CheckReasons its reason codes.
	Check        string
	CheckReasons []string
	// Ownership is the ownership match's result (match, partial,
	// mismatch, unavailable), "" when the source was not linked with a
	// processor token; OwnershipScores its scores in words.
	Ownership       string
	OwnershipScores string
	Events          []LogRow

	Sandbox       bool     // the sandbox's simulation buttons are shown
	ReturnCodes   []Option // the codes a simulated return offers
	ChangeCodes   []Option // sandbox: the change codes a simulated notification of change offers
	Payments      []PaymentRow
	Subscriptions []SubscriptionRow
	Mandates      []MandateRow
}

// MandateRow is one mandate of a source with its evidence.
type MandateRow struct {
	ID         string
	Type       string // single or recurring
	SECCode    string
	Status     string // active or revoked
	Accepted   string // when the customer accepted
	IP         string // "" when none was captured (the sandbox's own mandates)
	UserAgent  string
	Text       string // the authorization as the customer saw it
	TextSHA256 string
	Revoked    string // "" while active; else when and why
	// Clock is the test clock its customer lives on; nil on the wall clock.
	Clock *ClockMark
}

// PaymentRow is one payment of a source.
type PaymentRow struct {
	ID        string
	Amount    string // "$12.34"
	Direction string // debit or credit
	Status    string // pending, held, processed, failed or canceled
	Hold      string // why a held payment waits for review, in words; "" otherwise
	Failure   string // "R01 Insufficient funds", "" unless failed
	Attempt   string // "subscription, attempt 2", "" for a one-off payment
	Created   string
	CanReturn bool // sandbox: pending or processed, so a return can be simulated
	// Clock is the test clock its customer lives on; nil on the wall clock.
	Clock *ClockMark
}

// SubscriptionRow is one subscription of a source.
type SubscriptionRow struct {
	ID         string
	Amount     string // "$9.99 weekly"
	Status     string // active or canceled
	Next       string // next due date, "" when canceled
	Retry      string // the re-presentment's day, "" when none
	Reason     string // why it was canceled
	CanAdvance bool   // sandbox: active, so its next debit can be created now
	// Clock is the test clock its customer lives on; nil on the wall clock.
	Clock *ClockMark
}

// Settings is the settings page.
type Settings struct {
	MerchantID string
	ThirdParty bool // third-party verification is on in this environment
	// AccountCheckPolicy (flag, block_fail) and OwnershipPolicy (flag,
	// require_match) are the environment's policies.
	AccountCheckPolicy, OwnershipPolicy string
	Origins                             []string
	Typed                               string // a refused origin, shown again
	Error                               string // why it was refused
	Sessions                            []SessionRow
	PasswordError                       string // why a password change was refused
	PasswordField                       string // current_password or new_password, with PasswordError
	// The hosted page's brand: the stored or typed display name and accent,
	// the current logo's address ("" for none), and why a change was
	// refused, with the field (display_name, accent or logo).
	BrandName, BrandAccent string
	LogoURL                string
	BrandError, BrandField string
	// Originator is the environment's ACH originator; nil shows none.
	Originator *OriginatorView
}

// OriginatorView is an environment's ACH originator as Settings shows it:
// amounts in dollars ("2500.00"), usage of today's banking day.
type OriginatorView struct {
	Status, StatusLabel                string
	CompanyName, CompanyID             string
	PerEntryDebit, DailyDebit          string
	DailyCredit, UsedDebit, UsedCredit string
	SameDay                            bool
}

// SessionRow is a signed-in session for people.
type SessionRow struct {
	Created, LastSeen, IP, Agent string
	Current                      bool // the session viewing the page
}

// PendingLabel names, for people, an Unverified source whose
// micro-deposits are out: the API's verification.status "pending", the
// event funding_source.verification_pending, as docs/walkthrough.md explains it.
const PendingLabel = "Verification pending"

// statusClass is the badge style of a status or delivery state.
func statusClass(s string) string {
	switch s {
	case "Verified", "delivered", "succeeded", "active", "ready":
		return "badge badge-ok"
	case "failed", "Removed", "expired", "canceled", "suspended":
		return "badge badge-bad"
	case PendingLabel, "pending", "retrying", "held", "pending_review", "advancing":
		return "badge badge-wait"
	}
	return "badge"
}

// describedBy is the aria-describedby of a sign-in or sign-up input: the
// error when it is about this field, and the hint when there is one; no
// attribute when neither.
func describedBy(v AuthForm, name, hint string) templ.Attributes {
	var ids []string
	if v.ErrorField == name {
		ids = append(ids, "form-error")
	}
	if hint != "" {
		ids = append(ids, name+"-hint")
	}
	if len(ids) == 0 {
		return templ.Attributes{}
	}
	return templ.Attributes{"aria-describedby": strings.Join(ids, " ")}
}

// brandDescribedBy links a brand field to its hint and, when the refusal
// is about it, the form's error.
func brandDescribedBy(v Settings, field string) string {
	if v.BrandField == field {
		return field + "-hint brand-error"
	}
	return field + "-hint"
}

// CheckSummary says in words what an account check's result means.
func CheckSummary(result string) string {
	switch result {
	case "pass":
		return "Pass: the account was verified before, and nothing worse is known."
	case "caution":
		return "Caution: worth a look before you debit it."
	case "fail":
		return "Fail: a bank refused this account in the last 365 days; debits are likely to come back."
	}
	return "Unknown: this service has no history of the account yet."
}

// OwnershipSummary is an ownership match's result in words.
func OwnershipSummary(result string) string {
	switch result {
	case "match":
		return "Match: the account's owner has this customer's name."
	case "partial":
		return "Partial: the owner shares only part of the customer's name; check before you debit."
	case "mismatch":
		return "Mismatch: the account's owner has another name; it may not be this customer's account."
	}
	return "Unavailable: the provider could not say who owns the account."
}

// checkReasons are the account check's reasons in words.
var checkReasons = map[string]string{
	"verified_before":          "It was verified before, here or for another business.",
	"returned_no_account":      "A bank answered that no such account exists (R03 or AC03).",
	"returned_closed":          "A bank answered that the account is closed (R02 or AC04).",
	"returned_invalid":         "A bank answered that the account number is invalid (R04).",
	"returned_frozen":          "A bank answered that the account is frozen or blocked (R16 or AC06).",
	"returned_unauthorized":    "The account holder disputed a debit's authorization (R05, R07, R10, R11 or R29).",
	"returned_non_transaction": "A bank answered that the account cannot take these transactions (R20).",
	"corrected_by_noc":         "A bank corrected the account's details with a notification of change.",
	"many_customers":           "Customers of two or more other businesses verified or paid with this account in the last 90 days.",
}

// CheckReason says an account check's reason code in words.
func CheckReason(code string) string {
	if r, ok := checkReasons[code]; ok {
		return r
	}
	return code
}
