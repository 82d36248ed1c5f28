package funding

import (
	"context"
	"fmt"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"strings"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// tokenLabel separates processor-token fingerprints from account numbers.
const tokenLabel = "processor_token"

// MaxProcessorToken is the longest processor token accepted.
const MaxProcessorToken = 200

// ProcessorInput is POST /v2/funding-source/processor/linking.
type ProcessorInput struct {
	CustomerID     string `json:"user_id"`
	ProcessorToken string `json:"processor_token"`
	// AccountHolderType is as on Input; the default comes from the
	// customer read here anyway.
	AccountHolderType *string `json:"account_holder_type"`
	// Metadata is the merchant's own (metadata package).
	Metadata metadata.Metadata `json:"metadata"`
}

func invalidToken(msg string) error {
	return &errs.Error{Code: errs.InvalidProcessorToken, Param: "processor_token", Message: msg}
}

// CreateFromProcessorToken links the account behind a bank-linking
// provider's processor token as a Verified source: PrepareProcessorToken,
// then LinkProcessorAccount.
func (s *Service) CreateFromProcessorToken(ctx context.Context, c Caller, in ProcessorInput) (Source, error) {
	l, err := s.PrepareProcessorToken(ctx, c, in)
	if err != nil {
		return Source{}, err
	}
	return s.LinkProcessorAccount(ctx, c, l)
}

// ProcessorLink is what the provider said about a processor token's
// account and its owner, ready to be linked (LinkProcessorAccount).
type ProcessorLink struct {
	fp    []byte // the token's keyed fingerprint
	input Input
	own   *Ownership
}

// PrepareProcessorToken asks the provider about a processor token, in no
// transaction (an idempotent request calls it before its own, so no lock
// waits on the provider). Order: the customer must exist; a token seen
// before is refused without asking the provider; then the provider is
// asked for the account, then how well the customer matches its owner
// (checkOwnership).
func (s *Service) PrepareProcessorToken(ctx context.Context, c Caller, in ProcessorInput) (ProcessorLink, error) {
	scope := c.Scope
	customerID := strings.TrimSpace(in.CustomerID)
	if customerID == "" {
		return ProcessorLink{}, errs.Invalid("user_id", "user_id is required")
	}
	if in.ProcessorToken == "" {
		return ProcessorLink{}, errs.Invalid("processor_token", "processor_token is required")
	}
	if len(customerID) > MaxUserID {
		return ProcessorLink{}, customerNotFound()
	}
	// Checked before the provider is asked, so a refusal spends no token.
	if _, err := metadata.New(in.Metadata); err != nil {
		return ProcessorLink{}, err
	}
	who, err := s.store.CustomerIdentity(ctx, scope, customerID)
	if errs.Is(err, errs.NotFound) {
		return ProcessorLink{}, customerNotFound()
	}
	if err != nil {
		return ProcessorLink{}, fmt.Errorf("read customer %s: %w", customerID, err)
	}
	holder, err := holderType(in.AccountHolderType)
	if err != nil {
		return ProcessorLink{}, err
	}
	if holder == "" {
		holder = defaultHolder(who)
	}
	tok := in.ProcessorToken
	if len(tok) > MaxProcessorToken || !strings.HasPrefix(tok, "processor-") || strings.Trim(tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return ProcessorLink{}, invalidToken("The processor token is malformed; pass the processor_token the provider returned (processor-…).")
	}
	fp := s.vault.Fingerprint(tokenLabel, tok)
	used, err := s.store.ProcessorTokenUsed(ctx, scope.Env, fp)
	if err != nil {
		return ProcessorLink{}, fmt.Errorf("check whether a processor token was used: %w", err)
	}
	if used {
		return ProcessorLink{}, invalidToken("This processor token was already used; a processor token links one account once. Create a new one with the provider.")
	}
	if s.provider == nil {
		return ProcessorLink{}, errs.New(errs.ProviderUnavailable, "No bank-linking provider is configured.")
	}
	acct, err := s.provider.Account(ctx, tok)
	if err != nil {
		return ProcessorLink{}, fmt.Errorf("read the account of a processor token for customer %s: %w", customerID, err)
	}
	if acct.Subtype != Checking && acct.Subtype != Savings {
		kind := strings.TrimSpace(acct.Subtype + " " + acct.Type)
		return ProcessorLink{}, &errs.Error{Code: errs.InvalidAccountType, Param: "processor_token",
			Message: "The linked account is a " + kind + " account; only checking and savings accounts can be funding sources."}
	}
	own, err := s.checkOwnership(ctx, c, tok, who)
	if err != nil {
		return ProcessorLink{}, err
	}
	in2 := Input{CustomerID: customerID, RoutingNumber: acct.RoutingNumber, AccountNumber: acct.AccountNumber, AccountType: &acct.Subtype,
		AccountHolderType: &holder, Metadata: in.Metadata}
	if name := strings.TrimSpace(acct.Name); name != "" {
		if len(name) > MaxNickname {
			name = name[:MaxNickname]
		}
		in2.Nickname = &name
	}
	return ProcessorLink{fp: fp, input: in2, own: own}, nil
}

// LinkProcessorAccount stores a prepared processor token's account as a
// Verified source. The token is recorded as consumed (by a keyed
// fingerprint, never in clear) in the transaction that stores the source,
// so a provider failure leaves it usable.
func (s *Service) LinkProcessorAccount(ctx context.Context, c Caller, l ProcessorLink) (Source, error) {
	src, err := s.create(ctx, c, l.input, Verified, l.own, func(ctx context.Context, tx Store, src Source) error {
		err := tx.ConsumeProcessorToken(ctx, c.Scope, l.fp, src.ID, s.now(ctx))
		if errs.Is(err, errs.Conflict) {
			return invalidToken("This processor token was already used; a processor token links one account once.")
		}
		if err != nil {
			return fmt.Errorf("consume the processor token of source %s: %w", src.ID, err)
		}
		if err := tx.SetOwnership(ctx, src); err != nil {
			return fmt.Errorf("record the ownership check of source %s: %w", src.ID, err)
		}
		return nil
	})
	if e, ok := errs.As(err); ok && e.Code == errs.AccountInUse {
		// This request has no account_number: the account came with the token.
		e2 := *e
		e2.Param = "processor_token"
		return Source{}, &e2
	}
	return src, err
}
