package harness

import "fmt"

// Amounts reads a source's open micro-deposit amounts through the sandbox
// endpoint, as "0.12".
func (h *Harness) Amounts(key, id string) [2]string {
	h.T.Helper()
	r := WantOK(h.T, h.Get("/v2/sandbox/funding-source/"+id+"/micro-deposits", key))
	a := r["amounts"].([]any)
	return [2]string{fmt.Sprintf("%.2f", a[0].(float64)), fmt.Sprintf("%.2f", a[1].(float64))}
}

// WrongPair returns two amounts that differ from the deposited pair, as a
// JSON array.
func WrongPair(right [2]string) string {
	if right[0] == "0.98" || right[1] == "0.98" {
		return `[0.99, 0.99]`
	}
	return `[0.98, 0.98]`
}

// VerifyBody is the body of POST /v2/funding-source/verify; amounts is a
// JSON array.
func VerifyBody(id, amounts string) string {
	return `{"funding_source_id":"` + id + `","amounts":` + amounts + `}`
}

// Initiate sends a source's micro-deposits.
func (h *Harness) Initiate(key, id string) *Response {
	h.T.Helper()
	return h.Post("/v2/funding-source/initiate/verification", key, `{"funding_source_id":"`+id+`"}`)
}

// VerifiedSource creates a source and verifies it with its micro-deposits.
func (h *Harness) VerifiedSource(key, customerID, account string) string {
	h.T.Helper()
	id := h.Source(key, customerID, account)
	WantOK(h.T, h.Initiate(key, id))
	a := h.Amounts(key, id)
	WantOK(h.T, h.Post("/v2/funding-source/verify", key, VerifyBody(id, "["+a[0]+","+a[1]+"]")))
	return id
}

// PaymentBody is the body of POST /v2/payments; amount is a JSON value.
func PaymentBody(src, amount, direction string) string {
	return `{"funding_source_id":"` + src + `","amount":` + amount + `,"direction":"` + direction + `"}`
}

// Authorization is a customer's consent as a merchant would capture it,
// the value of a request's "authorization" member.
const Authorization = `{"accepted_at":"2026-11-01T15:04:05Z","ip_address":"203.0.113.7","user_agent":"Mozilla/5.0 (Test)","text":"I authorize Acme to debit my account."}`

// DebitBody is the body of POST /v2/payments for a debit authorized by
// the customer (production needs one); amount is a JSON value.
func DebitBody(src, amount string) string {
	return `{"funding_source_id":"` + src + `","amount":` + amount + `,"direction":"debit","authorization":` + Authorization + `}`
}

// InitiateBy starts a source's verification by method (micro_deposits,
// instant or auto).
func (h *Harness) InitiateBy(key, id, method string) *Response {
	h.T.Helper()
	return h.Post("/v2/funding-source/initiate/verification", key, `{"funding_source_id":"`+id+`","method":"`+method+`"}`)
}

// Code reads an instant verification's code through the sandbox endpoint.
func (h *Harness) Code(key, id string) string {
	h.T.Helper()
	r := WantOK(h.T, h.Get("/v2/sandbox/funding-source/"+id+"/micro-deposits", key))
	c, _ := r["code"].(string)
	if c == "" {
		h.T.Fatalf("no code in %v", r)
	}
	return c
}

// CodeBody is the body of POST /v2/funding-source/verify with a code.
func CodeBody(id, code string) string {
	return `{"funding_source_id":"` + id + `","code":"` + code + `"}`
}
