package api

import (
	"encoding/json"
	"fmt"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/idempotency"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/funding"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/web/surface"
)

// caller is what the funding rules need to know about the request's key.
func caller(c *gin.Context) funding.Caller {
	p := surface.Principal(c)
	return funding.Caller{Scope: p.Scope, OnDemand: p.Can(merchant.PermOnDemand), ThirdPartyVerification: p.ThirdPartyVerification,
		AccountCheckPolicy: p.AccountCheck, OwnershipPolicy: p.Ownership}
}

func (s *Surface) createOnDemand(c *gin.Context) { s.createSource(c, funding.OnDemand) }

func (s *Surface) createForMicroDeposits(c *gin.Context) { s.createSource(c, funding.ForMicroDeposits) }

// createSource answers an account-number creation: it decodes the body and
// calls one funding method. With an Idempotency-Key that is
// funding.Service.CreateKeyed, which owns the whole keyed flow (the
// one-statement write of a new account's creation with the claim and its
// answer, and the general path when that writes nothing) and asks this
// surface only to render its answers. A body that does not decode is
// answered as any idempotent request's error is, stored under the key.
func (s *Surface) createSource(c *gin.Context, kind funding.Kind) {
	req, ok := s.idempotencyRequest(c)
	if !ok {
		return
	}
	var in funding.Input
	if err := surface.Decode(c, &in); err != nil {
		if req == nil {
			s.Fail(c, err)
			return
		}
		s.runIdempotent(c, *req, func(c *gin.Context, _ Services) { s.Fail(c, err) })
		return
	}
	ctx := c.Request.Context()
	if req == nil {
		src, err := s.Services.Funding.Create(ctx, caller(c), kind, in)
		surface.Reply(s.Shared, c, src, err)
		return
	}
	before := c.Writer.Header().Clone()
	resp, replayed, err := s.Services.Funding.CreateKeyed(ctx, caller(c), kind, in, *req,
		func(src funding.Source, err error) idempotency.Response {
			return buffered(c, func() { surface.Reply(s.Shared, c, src, err) })
		})
	var replay *idempotency.Response
	if replayed {
		replay = &resp
	}
	s.answerIdempotent(c, before, resp, replay, err)
}

// askProvider decodes a processor-token linking and asks the provider
// about the token (funding.Service.PrepareProcessorToken).
func (s *Surface) askProvider(c *gin.Context) (funding.ProcessorLink, error) {
	var in funding.ProcessorInput
	if err := surface.Decode(c, &in); err != nil {
		return funding.ProcessorLink{}, err
	}
	return s.Services.Funding.PrepareProcessorToken(c.Request.Context(), caller(c), in)
}

func (s *Surface) linkProcessorToken(c *gin.Context, svc Services, asked funding.ProcessorLink, err error) {
	if err != nil {
		s.Fail(c, err)
		return
	}
	src, err := svc.Funding.LinkProcessorAccount(c.Request.Context(), caller(c), asked)
	surface.Reply(s.Shared, c, src, err)
}

func (s *Surface) getSource(c *gin.Context, svc Services) {
	src, err := svc.Funding.Get(c.Request.Context(), surface.Scope(c), c.Param("funding_source_id"))
	surface.Reply(s.Shared, c, src, err)
}

func (s *Surface) listCustomerSources(c *gin.Context, svc Services) {
	p, err := paging.Parse(c.Query("limit"), c.Query("starting_after"))
	if err != nil {
		s.Fail(c, err)
		return
	}
	removed := funding.WithoutRemoved
	switch c.Query("removed") {
	case "", "false":
	case "true":
		removed = funding.WithRemoved
	default:
		s.Fail(c, errs.Invalid("removed", "removed must be true or false"))
		return
	}
	list, more, err := svc.Funding.ListForCustomer(c.Request.Context(), surface.Scope(c), c.Param("user_id"), removed, p)
	surface.Reply(s.Shared, c, surface.ListOf(list, more), err)
}

// sourceRef is a body naming one funding source.
type sourceRef struct {
	FundingSourceID string `json:"funding_source_id"`
}

func (r *sourceRef) ref() *sourceRef { return r }

// decodeRef decodes a body that names a funding source and requires the id.
func decodeRef(c *gin.Context, dst interface{ ref() *sourceRef }) error {
	if err := surface.Decode(c, dst); err != nil {
		return err
	}
	if strings.TrimSpace(dst.ref().FundingSourceID) == "" {
		return errs.Invalid("funding_source_id", "funding_source_id is required")
	}
	return nil
}

func (s *Surface) initiateVerification(c *gin.Context, svc Services) {
	var in struct {
		sourceRef
		Method string `json:"method"` // micro_deposits (default), instant or auto
	}
	if err := decodeRef(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	src, err := svc.Funding.InitiateVerificationBy(c.Request.Context(), surface.Scope(c), in.FundingSourceID, in.Method)
	if err == nil && src.PendingVerification != nil {
		// Written on the request's transaction: sent once it committed
		// (onceSend).
		pv := *src.PendingVerification
		c.Set(pendingSendKey, func(c *gin.Context) {
			src, err := s.Services.Funding.DeliverVerification(c.Request.Context(), pv)
			surface.Reply(s.Shared, c, src, err)
		})
	}
	surface.Reply(s.Shared, c, src, err)
}

func (s *Surface) verifyMicroDeposits(c *gin.Context, svc Services) {
	var in struct {
		sourceRef
		Amounts []json.RawMessage `json:"amounts"`
		Code    *string           `json:"code"` // an instant verification's code, instead of amounts
	}
	if err := decodeRef(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	if in.Code != nil {
		if in.Amounts != nil {
			s.Fail(c, errs.Invalid("code", "Send either amounts (micro-deposits) or code (instant verification), not both."))
			return
		}
		src, err := svc.Funding.VerifyCode(c.Request.Context(), surface.Scope(c), in.FundingSourceID, *in.Code)
		surface.Reply(s.Shared, c, src, err)
		return
	}
	cents, err := funding.ParseAmounts(in.Amounts)
	if err != nil {
		s.Fail(c, err)
		return
	}
	src, err := svc.Funding.VerifyMicroDeposits(c.Request.Context(), surface.Scope(c), in.FundingSourceID, cents)
	surface.Reply(s.Shared, c, src, err)
}

func (s *Surface) checkAccount(c *gin.Context, svc Services) {
	var in struct {
		AccountNumber string `json:"account_number"`
	}
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	if in.AccountNumber == "" {
		s.Fail(c, errs.Invalid("account_number", "account_number is required"))
		return
	}
	available, err := svc.Funding.AccountAvailable(c.Request.Context(), surface.Scope(c), in.AccountNumber)
	surface.Reply(s.Shared, c, struct {
		Available bool `json:"available"`
	}{available}, err)
}

// deleteAccount removes a source named by funding_source_id, or by user_id
// and account_number.
func (s *Surface) deleteAccount(c *gin.Context, svc Services) {
	var in struct {
		FundingSourceID string `json:"funding_source_id"`
		CustomerID      string `json:"user_id"`
		AccountNumber   string `json:"account_number"`
	}
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	ctx := c.Request.Context()
	switch {
	case in.FundingSourceID != "" && in.CustomerID == "" && in.AccountNumber == "":
		src, err := svc.Consequences.Remove(ctx, surface.Scope(c), in.FundingSourceID)
		surface.Reply(s.Shared, c, src, err)
	case in.FundingSourceID == "" && in.CustomerID != "" && in.AccountNumber != "":
		src, err := svc.Consequences.RemoveAccount(ctx, surface.Scope(c), in.CustomerID, in.AccountNumber)
		surface.Reply(s.Shared, c, src, err)
	default:
		s.Fail(c, errs.Invalid("funding_source_id", "send either funding_source_id, or user_id and account_number"))
	}
}

func (s *Surface) sandboxMicroDeposits(c *gin.Context, svc Services) {
	id := c.Param("funding_source_id")
	p, v, err := svc.Funding.SandboxVerification(c.Request.Context(), surface.Scope(c), id)
	if err == nil && p.Amounts == nil {
		surface.Reply(s.Shared, c, struct {
			FundingSourceID string                `json:"funding_source_id"`
			Code            string                `json:"code"`
			Verification    *funding.Verification `json:"verification"`
		}{id, p.Code, v}, nil)
		return
	}
	var cents [2]int
	if p.Amounts != nil {
		cents = *p.Amounts
	}
	surface.Reply(s.Shared, c, struct {
		FundingSourceID string                `json:"funding_source_id"`
		Amounts         [2]json.Number        `json:"amounts"`
		Verification    *funding.Verification `json:"verification"`
	}{id, [2]json.Number{centsNumber(cents[0]), centsNumber(cents[1])}, v}, err)
}

// centsNumber formats cents as a JSON number with two decimals (12 → 0.12).
func centsNumber(c int) json.Number { return json.Number(fmt.Sprintf("%d.%02d", c/100, c%100)) }

// updateSource changes a source's nickname (null or "" removes it) and
// account holder type; the body must name at least one of them.
func (s *Surface) updateSource(c *gin.Context, svc Services) {
	var in struct {
		Nickname          nicknameMember    `json:"nickname"`
		AccountHolderType *string           `json:"account_holder_type"`
		Metadata          metadata.Metadata `json:"metadata"`
	}
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	u := funding.Update{AccountHolderType: in.AccountHolderType, Metadata: in.Metadata}
	if in.Nickname.set {
		u.Nickname = &funding.NicknameUpdate{Value: in.Nickname.value}
	}
	src, err := svc.Funding.Update(c.Request.Context(), surface.Scope(c), c.Param("funding_source_id"), u)
	surface.Reply(s.Shared, c, src, err)
}

// nicknameMember is the nickname member: a string or null, and whether it was
// sent at all (a JSON null and a missing member differ).
type nicknameMember struct {
	set   bool
	value *string
}

// UnmarshalJSON records that the member was sent.
func (n *nicknameMember) UnmarshalJSON(b []byte) error {
	n.set = true
	if err := json.Unmarshal(b, &n.value); err != nil {
		return errs.Invalid("nickname", "nickname must be a string or null.")
	}
	return nil
}

func (s *Surface) unblockSource(c *gin.Context, svc Services) {
	var in funding.UnblockInput
	if err := surface.Decode(c, &in); err != nil {
		s.Fail(c, err)
		return
	}
	src, err := svc.Funding.Unblock(c.Request.Context(), surface.Scope(c), c.Param("funding_source_id"), in, surface.Actor(c))
	surface.Reply(s.Shared, c, src, err)
}
