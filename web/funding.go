package web

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/errs"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/paging"
)

// caller is what the funding rules need to know about the request's key.
func caller(c *gin.Context) funding.Caller {
	p := principal(c)
	return funding.Caller{Scope: p.Scope, OnDemand: p.Can(merchant.PermOnDemand), ThirdPartyVerification: p.ThirdPartyVerification}
}

func (s *server) createOnDemand(c *gin.Context) {
	var in funding.Input
	if err := decode(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	s.respond(c)(s.funding.CreateOnDemand(c.Request.Context(), caller(c), in))
}

func (s *server) createForMicroDeposits(c *gin.Context) {
	var in funding.Input
	if err := decode(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	s.respond(c)(s.funding.CreateForMicroDeposits(c.Request.Context(), scope(c), in))
}

func (s *server) linkProcessorToken(c *gin.Context) {
	var in funding.ProcessorInput
	if err := decode(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	s.respond(c)(s.funding.CreateFromProcessorToken(c.Request.Context(), scope(c), in))
}

func (s *server) getSource(c *gin.Context) {
	s.respond(c)(s.funding.Get(c.Request.Context(), scope(c), c.Param("funding_source_id")))
}

func (s *server) listCustomerSources(c *gin.Context) {
	p, err := paging.Parse(c.Query("limit"), c.Query("starting_after"))
	if err != nil {
		s.fail(c, err)
		return
	}
	var removed bool
	switch c.Query("removed") {
	case "", "false":
	case "true":
		removed = true
	default:
		s.fail(c, errs.Invalid("removed", "removed must be true or false"))
		return
	}
	list, more, err := s.funding.ListForCustomer(c.Request.Context(), scope(c), c.Param("user_id"), removed, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	okList(c, list, more)
}

// sourceRef is a body naming one funding source.
type sourceRef struct {
	FundingSourceID string `json:"funding_source_id"`
}

func (r *sourceRef) ref() *sourceRef { return r }

// decodeRef decodes a body that names a funding source and requires the id.
func decodeRef(c *gin.Context, dst interface{ ref() *sourceRef }) error {
	if err := decode(c, dst); err != nil {
		return err
	}
	if strings.TrimSpace(dst.ref().FundingSourceID) == "" {
		return errs.Invalid("funding_source_id", "funding_source_id is required")
	}
	return nil
}

func (s *server) initiateVerification(c *gin.Context) {
	var in sourceRef
	if err := decodeRef(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	s.respond(c)(s.funding.InitiateVerification(c.Request.Context(), scope(c), in.FundingSourceID))
}

func (s *server) verifyMicroDeposits(c *gin.Context) {
	var in struct {
		sourceRef
		Amounts []json.RawMessage `json:"amounts"`
	}
	if err := decodeRef(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	cents, err := funding.ParseAmounts(in.Amounts)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.respond(c)(s.funding.VerifyMicroDeposits(c.Request.Context(), scope(c), in.FundingSourceID, cents))
}

func (s *server) checkAccount(c *gin.Context) {
	var in struct {
		AccountNumber string `json:"account_number"`
	}
	if err := decode(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	if in.AccountNumber == "" {
		s.fail(c, errs.Invalid("account_number", "account_number is required"))
		return
	}
	available, err := s.funding.AccountAvailable(c.Request.Context(), scope(c), in.AccountNumber)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, struct {
		Available bool `json:"available"`
	}{available})
}

// deleteAccount removes a source named by funding_source_id, or by user_id
// and account_number.
func (s *server) deleteAccount(c *gin.Context) {
	var in struct {
		FundingSourceID string `json:"funding_source_id"`
		UserID          string `json:"user_id"`
		AccountNumber   string `json:"account_number"`
	}
	if err := decode(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	switch {
	case in.FundingSourceID != "" && in.UserID == "" && in.AccountNumber == "":
		s.respond(c)(s.funding.Remove(ctx, scope(c), in.FundingSourceID))
	case in.FundingSourceID == "" && in.UserID != "" && in.AccountNumber != "":
		s.respond(c)(s.funding.RemoveAccount(ctx, scope(c), in.UserID, in.AccountNumber))
	default:
		s.fail(c, errs.Invalid("funding_source_id", "send either funding_source_id, or user_id and account_number"))
	}
}

func (s *server) sandboxMicroDeposits(c *gin.Context) {
	id := c.Param("funding_source_id")
	cents, v, err := s.funding.SandboxAmounts(c.Request.Context(), scope(c), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, struct {
		FundingSourceID string                `json:"funding_source_id"`
		Amounts         [2]json.Number        `json:"amounts"`
		Verification    *funding.Verification `json:"verification"`
	}{id, [2]json.Number{centsNumber(cents[0]), centsNumber(cents[1])}, v})
}

// centsNumber formats cents as a JSON number with two decimals (12 → 0.12).
func centsNumber(c int) json.Number { return json.Number(fmt.Sprintf("%d.%02d", c/100, c%100)) }

// respond returns a function writing a service result: the resource with
// success, or the error envelope.
func (s *server) respond(c *gin.Context) func(funding.Source, error) {
	return func(src funding.Source, err error) { reply(s, c, src, err) }
}
