package funding

import (
	"context"
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
// provider's processor token as a Verified source. Order: the customer must
// exist; a token seen before is refused without asking the provider; then
// the provider is asked for the account, then how well the customer
// matches its owner (checkOwnership). The token is recorded as consumed
// (by a keyed fingerprint, never in clear) in the transaction that stores
// the source, so a provider failure leaves it usable.
func (s *Service) CreateFromProcessorToken(ctx context.Context, c Caller, in ProcessorInput) (Source, error) {
	scope := c.Scope
	customerID := strings.TrimSpace(in.CustomerID)
	if customerID == "" {
		return Source{}, errs.Invalid("user_id", "user_id is required")
	}
	if in.ProcessorToken == "" {
		return Source{}, errs.Invalid("processor_token", "processor_token is required")
	}
	if len(customerID) > MaxUserID {
		return Source{}, customerNotFound()
	}
	// Checked before the provider is asked, so a refusal spends no token.
	if _, err := metadata.New(in.Metadata); err != nil {
		return Source{}, err
	}
	who, err := s.store.CustomerIdentity(ctx, scope, customerID)
	if errs.Is(err, errs.NotFound) {
		return Source{}, customerNotFound()
	}
	if err != nil {
		return Source{}, err
	}
	holder, err := holderType(in.AccountHolderType)
	if err != nil {
		return Source{}, err
	}
	if holder == "" {
		holder = defaultHolder(who)
	}
	tok := in.ProcessorToken
	if len(tok) > MaxProcessorToken || !strings.HasPrefix(tok, "processor-") || strings.Trim(tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return Source{}, invalidToken("The processor token is malformed; pass the processor_token the provider returned (processor-…).")
	}
	fp := s.vault.Fingerprint(tokenLabel, tok)
	used, err := s.store.ProcessorTokenUsed(ctx, scope.Env, fp)
	if err != nil {
		return Source{}, err
	}
	if used {
		return Source{}, invalidToken("This processor token was already used; a processor token links one account once. Create a new one with the provider.")
	}
	if s.provider == nil {
		return Source{}, errs.New(errs.ProviderUnavailable, "No bank-linking provider is configured.")
	}
	acct, err := s.provider.Account(ctx, tok)
	if err != nil {
		return Source{}, err
	}
	if acct.Subtype != Checking && acct.Subtype != Savings {
		kind := strings.TrimSpace(acct.Subtype + " " + acct.Type)
		return Source{}, &errs.Error{Code: errs.InvalidAccountType, Param: "processor_token",
			Message: "The linked account is a " + kind + " account; only checking and savings accounts can be funding sources."}
	}
	own, err := s.checkOwnership(ctx, c, tok, who)
	if err != nil {
		return Source{}, err
	}
	in2 := Input{CustomerID: customerID, RoutingNumber: acct.RoutingNumber, AccountNumber: acct.AccountNumber, AccountType: &acct.Subtype,
		AccountHolderType: &holder, Metadata: in.Metadata}
	if name := strings.TrimSpace(acct.Name); name != "" {
		if len(name) > MaxNickname {
			name = name[:MaxNickname]
		}
		in2.Nickname = &name
	}
	src, err := s.create(ctx, c, in2, Verified, own, func(ctx context.Context, tx Store, src Source) error {
		err := tx.ConsumeProcessorToken(ctx, scope, fp, src.ID, s.now())
		if errs.Is(err, errs.Conflict) {
			return invalidToken("This processor token was already used; a processor token links one account once.")
		}
		if err != nil {
			return err
		}
		return tx.SetOwnership(ctx, src)
	})
	if e, ok := errs.As(err); ok && e.Code == errs.AccountInUse {
		// This request has no account_number: the account came with the token.
		e2 := *e
		e2.Param = "processor_token"
		return Source{}, &e2
	}
	return src, err
}
