package dashboard

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/audit"
	"github.com/fundsource/fundsource/internal/evidence"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/payment"
	view "github.com/fundsource/fundsource/templates/dashboard"
)

// evidencePage is a payment's authorization evidence in words, to print:
// the facts of GET /v2/payments/{id}/evidence from the same service.
func (s *Surface) evidencePage(c *gin.Context) {
	ctx, scope := c.Request.Context(), current(c).Scope
	ev, err := s.evidence.Of(ctx, scope, c.Param("id"))
	if err != nil {
		s.Fail(c, err)
		return
	}
	v := evidenceView(ev)
	labels, err := s.funding.Labels(ctx, scope, []string{ev.Payment.SourceID})
	if err != nil {
		s.Fail(c, err)
		return
	}
	if v.Clock, err = s.clockMark(ctx, scope, labels[ev.Payment.SourceID].TestClock); err != nil {
		s.Fail(c, err)
		return
	}
	s.Page(c, http.StatusOK, view.EvidencePage(s.frame(c, "Evidence for payment "+ev.Payment.ID, "payments"), v))
}

// verifiedByWords says how a source was verified.
var verifiedByWords = map[string]string{
	"micro_deposits":                 "two micro-deposits the customer confirmed",
	"instant":                        "an instant payment's code the customer confirmed",
	funding.VerifiedByProcessorToken: "the customer signing in to the account at a bank-linking provider",
	funding.VerifiedByThirdParty:     "the merchant's own verification (third-party verification)",
}

// evidenceView is ev for people.
func evidenceView(ev evidence.Evidence) view.Evidence {
	p, src := ev.Payment, ev.FundingSource
	r := paymentRow(p)
	v := view.Evidence{PaymentID: p.ID, Status: r.Status, Failure: r.Failure, Created: r.Created, SourceID: src.ID}
	if p.Description != nil {
		v.Description = *p.Description
	}
	if p.SettledAt != nil {
		v.Settled = shortTime(*p.SettledAt)
	}
	v.Rail, v.Fallback = railWords(p)
	kind := map[string]string{"checking": "Checking", "savings": "Savings"}[src.AccountType]
	v.Account = fmt.Sprintf("%s account ending %s", kind, src.LastFour)
	if src.BankName != nil {
		v.Account += " at " + *src.BankName
	}
	if p.Direction == payment.Debit {
		v.Summary = fmt.Sprintf("A debit of %s from the customer's account ending %s.", r.Amount, src.LastFour)
	} else {
		v.Summary = fmt.Sprintf("A credit of %s to the customer's account ending %s.", r.Amount, src.LastFour)
	}
	if p.Purpose != "" {
		v.Summary += " Purpose: " + string(p.Purpose) + "."
	}
	v.Holder = "an individual, " + src.HolderName
	if src.AccountHolderType == "company" {
		v.Holder = "a company, " + src.HolderName
	}
	v.Verification = "Not verified: the account can only receive credits."
	if m := src.Verification.Method; m != nil {
		v.Verification = "Verified by " + verifiedByWords[*m]
		if at := src.Verification.VerifiedAt; at != nil {
			v.Verification += " on " + shortTime(*at)
		}
		v.Verification += "."
	}
	if ck := src.AccountCheck; ck != nil {
		v.Check = ck.Result + " (checked " + shortTime(ck.CheckedAt) + ")"
		for _, reason := range ck.Reasons {
			v.CheckReasons = append(v.CheckReasons, strings.ReplaceAll(reason, "_", " "))
		}
	}
	if o := src.Ownership; o != nil {
		v.Ownership = "The bank-linking provider matched the customer against the account's owner: " + o.Result
		if o.NameScore != nil {
			v.Ownership += fmt.Sprintf(", name %d of 100", *o.NameScore)
		}
		if o.EmailScore != nil {
			v.Ownership += fmt.Sprintf(", email %d of 100", *o.EmailScore)
		}
		v.Ownership += " (" + shortTime(o.CheckedAt) + ")."
	}
	if m := ev.Mandate; m != nil {
		v.Mandate = mandateView(*m)
	}
	for _, e := range ev.AuditEvents {
		v.Events = append(v.Events, eventView(e))
	}
	return v
}

func mandateView(m evidence.Mandate) *view.EvidenceMandate {
	out := &view.EvidenceMandate{ID: m.ID, Accepted: shortTime(m.AcceptedAt), Text: m.Text, TextSHA256: m.TextSHA256,
		Kind: "This one debit.", Standing: "In force: not revoked.", Sandbox: m.Text == payment.SandboxMandateText && m.IPAddress == nil}
	if m.Type == payment.Recurring {
		out.Kind = "Every debit of a subscription."
	}
	if m.IPAddress != nil {
		out.IPAddress = *m.IPAddress
	}
	if m.UserAgent != nil {
		out.UserAgent = *m.UserAgent
	}
	if m.RevokedAt != nil {
		out.Standing = "Revoked on " + shortTime(*m.RevokedAt)
		if m.RevokeReason != nil {
			out.Standing += " (" + strings.ReplaceAll(*m.RevokeReason, "_", " ") + ")"
		}
		out.Standing += "."
	}
	return out
}

// eventView is a security-log event in words; its details are ids and
// short reasons, never secrets (package audit).
func eventView(e audit.Event) view.EvidenceEvent {
	out := view.EvidenceEvent{At: shortTime(e.CreatedAt), Action: e.Action, Actor: actorWords(e.Actor)}
	keys := make([]string, 0, len(e.Details))
	for k := range e.Details {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, strings.ReplaceAll(k, "_", " ")+": "+e.Details[k])
	}
	out.Details = strings.Join(parts, "; ")
	return out
}

func actorWords(a audit.Actor) string {
	who := map[string]string{audit.ByAPIKey: "API key", audit.ByDashboardUser: "dashboard user", audit.ByOperator: "operator"}[a.Type]
	s := strings.TrimSpace(who + " " + a.ID)
	if a.IP != "" {
		s += " from " + a.IP
	}
	return s
}
