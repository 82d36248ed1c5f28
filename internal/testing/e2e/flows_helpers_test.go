package e2e_test

import (
	"fmt"

	th "github.com/fundsource/fundsource/internal/testing/harness"
)

// amounts reads the open micro-deposit amounts through the sandbox endpoint.
func (h *harness) amounts(key, id string) [2]string {
	h.T.Helper()
	r := th.WantOK(h.T, h.Get("/v2/sandbox/funding-source/"+id+"/micro-deposits", key))
	a := r["amounts"].([]any)
	return [2]string{fmt.Sprintf("%.2f", a[0].(float64)), fmt.Sprintf("%.2f", a[1].(float64))}
}

// wrongPair returns two amounts that differ from the deposited pair.
func wrongPair(right [2]string) string {
	if right[0] == "0.98" || right[1] == "0.98" {
		return `[0.99, 0.99]`
	}
	return `[0.98, 0.98]`
}

func verifyBody(id, amounts string) string {
	return `{"funding_source_id":"` + id + `","amounts":` + amounts + `}`
}

func initiate(h *harness, key, id string) *th.Response {
	h.T.Helper()
	return h.Post("/v2/funding-source/initiate/verification", key, `{"funding_source_id":"`+id+`"}`)
}

// verifiedSource creates a source and verifies it with its micro-deposits.
func (h *harness) verifiedSource(key, customerID, account string) string {
	h.T.Helper()
	id := h.Source(key, customerID, account)
	th.WantOK(h.T, initiate(h, key, id))
	a := h.amounts(key, id)
	th.WantOK(h.T, h.Post("/v2/funding-source/verify", key, verifyBody(id, "["+a[0]+","+a[1]+"]")))
	return id
}

func paymentBody(src, amount, direction string) string {
	return `{"funding_source_id":"` + src + `","amount":` + amount + `,"direction":"` + direction + `"}`
}
