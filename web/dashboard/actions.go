package dashboard

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/tenant"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	view "github.com/fundsource/fundsource/templates/dashboard"
)

// The actions of a payment's page and the notification-of-change
// simulation of a source's page: forms that call the service methods the
// API's handlers call (Cancel, Retry, Reverse, SimulateReturn,
// SimulateChange), so a refusal reads as the API's message. What moves
// money opens first and says what it will do; the page offers only what
// the service's own judgment allows (payment.CanCancel, Service.CanRetry,
// Service.CanReverse, payment.CanSimulateReturn), and the service still
// decides.

// returnCodeOptions are the ACH return codes a simulation takes.
func returnCodeOptions() []view.Option {
	var out []view.Option
	for _, code := range achcode.Known() {
		out = append(out, view.Option{Value: code, Label: code + " " + achcode.Title(code)})
	}
	return out
}

// actionsOf are the forms payment p's state allows in scope, each as the
// payment service judges it: canRetry and canReverse are its answers for
// a retry and a reversal (payment.Service.CanRetry, CanReverse), which
// read the store; cancel and the sandbox return are judged from p alone.
func actionsOf(scope tenant.Scope, p payment.Payment, canRetry, canReverse bool) view.PaymentActions {
	a := view.PaymentActions{Cancel: payment.CanCancel(scope, p), Retry: canRetry, Reverse: canReverse,
		Return: payment.CanSimulateReturn(scope, p)}
	if a.Reverse {
		for _, r := range payment.ReverseReasons {
			a.ReverseReasons = append(a.ReverseReasons, view.Option{Value: r, Label: strings.ReplaceAll(r, "_", " ")})
		}
	}
	if a.Return {
		a.ReturnCodes = returnCodeOptions()
	}
	return a
}

func paymentPath(id string) string { return "/dashboard/payments/" + id }

func (s *Surface) cancelPayment(c *gin.Context) {
	id := c.Param("id")
	_, err := s.payments.Cancel(c.Request.Context(), current(c).Scope, id)
	s.done(c, err, "Payment canceled.", paymentPath(id))
}

func (s *Surface) retryPayment(c *gin.Context) {
	id := c.Param("id")
	p, err := s.payments.Retry(c.Request.Context(), current(c).Scope, id)
	s.done(c, err, "The debit is presented again as "+p.ID+".", paymentPath(id))
}

func (s *Surface) reversePayment(c *gin.Context) {
	id := c.Param("id")
	p, err := s.payments.Reverse(c.Request.Context(), current(c).Scope, id, payment.ReverseInput{Reason: c.PostForm("reason")})
	msg := "Reversal created."
	if p.Reversal != nil {
		msg = "Reversal " + p.Reversal.PaymentID + " created."
	}
	s.done(c, err, msg, paymentPath(id))
}

// changeCodeOptions are the change codes a source takes, each with what it corrects.
func changeCodeOptions() []view.Option {
	words := map[string]string{
		funding.ChangeAccount: "account number", funding.ChangeRouting: "routing number",
		funding.ChangeRoutingAccount: "routing and account numbers", funding.ChangeName: "receiver's name",
		funding.ChangeType: "account type", funding.ChangeAccountType: "account number and type",
		funding.ChangeAll: "routing number, account number and type", funding.ChangeIndividualID: "individual id",
		funding.ChangeAddenda: "no more addenda",
	}
	out := make([]view.Option, len(funding.ChangeCodes))
	for i, code := range funding.ChangeCodes {
		out[i] = view.Option{Value: code, Label: code + " " + words[code]}
	}
	return out
}

func (s *Surface) simulateChange(c *gin.Context) {
	id := c.Param("id")
	in := funding.Correction{ChangeCode: c.PostForm("change_code"), CorrectedData: funding.CorrectedData{
		RoutingNumber: strings.TrimSpace(c.PostForm("routing_number")), AccountNumber: strings.TrimSpace(c.PostForm("account_number")),
		AccountType: c.PostForm("account_type"), Name: strings.TrimSpace(c.PostForm("name")),
		IndividualID: strings.TrimSpace(c.PostForm("individual_id")),
	}}
	_, err := s.funding.SimulateChange(c.Request.Context(), current(c).Scope, id, in)
	s.done(c, err, "Sandbox: the notification of change "+in.ChangeCode+" was applied.", "/dashboard/funding-sources/"+id)
}
