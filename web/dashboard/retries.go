package dashboard

import (
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/payment"
	view "github.com/fundsource/fundsource/templates/dashboard"
)

// presentments adds to a payment's page what ties it to other payments:
// the original it presents again or the payment it reverses, the
// original's re-presentments, and its reversal.
func (s *Surface) presentments(c *gin.Context, p payment.Payment, v *view.Payment) error {
	if p.RetryOf != nil {
		v.RetryOf = *p.RetryOf
	}
	if p.ReversalOf != nil {
		v.ReversalOf = *p.ReversalOf
	}
	if r := p.Reversal; r != nil {
		v.Reversal = &view.ReversalView{PaymentID: r.PaymentID, Reason: strings.ReplaceAll(r.Reason, "_", " "), Created: shortTime(r.CreatedAt)}
	}
	if p.Direction != payment.Debit || p.RetryOf != nil || p.ReversalOf != nil {
		return nil
	}
	retries, err := s.payments.Retries(c.Request.Context(), current(c).Scope, p.ID)
	if err != nil {
		return err
	}
	for _, r := range retries {
		label := ""
		if r.Attempt != nil {
			label = fmt.Sprintf("attempt %d", *r.Attempt)
		}
		v.Retries = append(v.Retries, view.PaymentLink{ID: r.ID, Status: string(r.Status), Label: label})
	}
	return nil
}
