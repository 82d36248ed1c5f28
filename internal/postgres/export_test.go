package postgres

// The one-row reads whose plans plan_test.go checks.
const (
	SelectSource   = selectSource
	SelectCustomer = selectCustomer
	SelectPayment  = selectPayment
)
