package dashboard

// TestClocks is the sandbox's test clocks page.
type TestClocks struct {
	Clocks []ClockRow
	// Advancing: a clock of the page is advancing; the page reloads
	// itself until none is.
	Advancing bool
	// Full: the merchant has the most clocks it may; the create form is
	// replaced by a note.
	Full bool
	Max  int
	Form ClockForm
}

// ClockForm is the create form, typed back with the service's refusal.
type ClockForm struct {
	Name       string
	FrozenTime string // datetime-local value, UTC
	Error      string
	ErrorField string // name or frozen_time
}

// ClockRow is one clock of the list.
type ClockRow struct {
	ID        string
	Name      string // "" when unnamed
	Label     string // its name, else its id
	Frozen    string // readable, UTC
	FrozenUTC string // RFC 3339
	Advancing bool
	AdvanceTo string // readable target of the advance under way
	// Customers is how many customers the clock carries; Shown the
	// newest of them.
	Customers int
	Shown     []ClockCustomer
	// Next is the advance form's default value (a day later), Min and
	// Max its bounds (datetime-local values).
	Next, Min, Max string
	Quick          []Option // the quick advances: value a preset, label what it adds
}

// ClockCustomer is a customer shown under its clock.
type ClockCustomer struct {
	ID, Name, Email string
}

// ClockMark is the test clock a customer and everything of theirs live
// on, shown on their pages and list rows; nil on the wall clock. For an
// event, Frozen is the clock's time when the event happened.
type ClockMark struct {
	ID, Label string
	Frozen    string // readable, UTC
	FrozenUTC string // RFC 3339
	Advancing bool
}
