package funding

import (
	"context"
	"errors"
	"fmt"
	"github.com/fundsource/fundsource/internal/core/metadata"

	"github.com/fundsource/fundsource/internal/core/achcode"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/paging"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// fingerprintLabel separates account-number fingerprints from any other kind.
const fingerprintLabel = "account_number"

// Caller is what the funding rules need to know about the API key in use.
type Caller struct {
	Scope tenant.Scope
	// OnDemand: the key carries the on-demand funding-source permission.
	OnDemand bool
	// ThirdPartyVerification: the merchant's environment is enabled for it.
	ThirdPartyVerification bool
	// AccountCheckPolicy is PolicyFlag ("" too) or PolicyBlockFail.
	AccountCheckPolicy string
	// OwnershipPolicy is PolicyFlag ("" too) or PolicyRequireMatch.
	OwnershipPolicy string
}

// Policy values (the merchant's settings).
const (
	PolicyFlag         = "flag"
	PolicyBlockFail    = "block_fail"
	PolicyRequireMatch = "require_match"
)

// Creation is a source ready to be stored: its input validated, its
// account number sealed and fingerprinted, its account checked, its id,
// time and events made. Preparing writes nothing, so the answer a
// successful creation gives can be rendered before it is written
// (CreateKeyed stores that answer with the source).
//
// Under the block_fail policy the check decides whether anything is
// written, so preparing reads the account's history (one indexed lookup)
// and refuses a failing account. Otherwise it reads nothing: a read is a
// round trip to the database of its own, and most accounts are new. The
// source is answered as for an account with no history
// (AccountFacts.Unread), and the statement that writes it checks that the
// account has none (one index probe in a statement it runs anyway). An
// account with a history refuses it, writing nothing; insert then reads
// the history, checks the account again and writes the source with that
// answer.
//
// The account holder type works the same way. When the input names none,
// the default is the customer's (company when it has a business name),
// which preparing does not read either: the source is answered as an
// individual's (HolderGuessed), and the statement, which reads the
// customer's row anyway to check that it exists, refuses a wrong guess
// and writes nothing; insert then reads the customer and writes the
// source with its default. So a creation for a customer with a business
// name costs one more round trip unless it names account_holder_type.
type Creation struct {
	Source Source
	events []event.Event
	policy string // the caller's AccountCheckPolicy
}

// Kind is which of the two account-number creations a request makes.
type Kind int

// The account-number creations.
const (
	// OnDemand is POST /v2/on-demand/funding-source: Verified when the
	// merchant's environment has third-party verification, else
	// Unverified (credit only); the key needs the on-demand permission.
	OnDemand Kind = iota
	// ForMicroDeposits is POST /v2/funding-source: always Unverified, to
	// be verified by micro-deposits.
	ForMicroDeposits
)

// prepareKind prepares a creation of kind for c.
func (s *Service) prepareKind(ctx context.Context, c Caller, kind Kind, in Input) (Creation, error) {
	if kind != OnDemand {
		return s.prepare(ctx, c, in, Unverified, nil)
	}
	if !c.OnDemand {
		return Creation{}, errs.New(errs.PermissionDenied,
			"This API key lacks the on-demand funding-source permission (on_demand_funding_source).")
	}
	if c.ThirdPartyVerification {
		return s.prepare(ctx, c, in, Verified, nil)
	}
	return s.prepare(ctx, c, in, Unverified, nil)
}

// Create prepares and stores a creation of kind for c.
func (s *Service) Create(ctx context.Context, c Caller, kind Kind, in Input) (Source, error) {
	cr, err := s.prepareKind(ctx, c, kind, in)
	if err != nil {
		return Source{}, err
	}
	return s.insert(ctx, s.store, cr)
}

// CreateOnDemand is Create of an OnDemand creation.
func (s *Service) CreateOnDemand(ctx context.Context, c Caller, in Input) (Source, error) {
	return s.Create(ctx, c, OnDemand, in)
}

// CreateForMicroDeposits is Create of a creation to be verified by
// micro-deposits, with the environment's default policies.
func (s *Service) CreateForMicroDeposits(ctx context.Context, scope tenant.Scope, in Input) (Source, error) {
	return s.Create(ctx, Caller{Scope: scope}, ForMicroDeposits, in)
}

// prepare validates in and makes the source with the given status and
// ownership check (nil but on the processor path), its account checked:
// under the block_fail policy against the account's history, and a check
// that fails is account_check_failed with its reasons; otherwise as a new
// account's, which the store checks.
func (s *Service) prepare(ctx context.Context, c Caller, in Input, status Status, own *Ownership) (Creation, error) {
	scope := c.Scope
	a, err := s.validate(scope.Env, in)
	if err != nil {
		return Creation{}, err
	}
	meta, err := metadata.New(in.Metadata)
	if err != nil {
		return Creation{}, err
	}
	now := s.now(ctx)
	src := Source{
		Scope: scope, ID: ids.New(ids.FundingSource), CustomerID: a.customerID, Status: status,
		BankName: a.bankName, LastFour: a.number[len(a.number)-4:], AccountType: a.accountType,
		AccountHolderType: a.holderType, Nickname: a.nickname, CreatedAt: now, RoutingNumber: a.routing,
		Fingerprint: s.vault.Fingerprint(fingerprintLabel, a.number), AccountFP: s.accountFP(a.routing, a.number),
		Ownership: own, Metadata: meta,
	}
	if src.AccountHolderType == "" {
		src.AccountHolderType, src.HolderGuessed = HolderIndividual, true
	}
	src.Facts = AccountFacts{Unread: true}
	if c.AccountCheckPolicy == PolicyBlockFail {
		if src.Facts, err = s.store.AccountFacts(ctx, scope.Env, src.AccountFP, scope.MerchantID, src.ID); err != nil {
			return Creation{}, fmt.Errorf("read the account facts of source %s: %w", src.ID, err)
		}
	}
	cr, err := s.checkedCreation(ctx, src, c.AccountCheckPolicy)
	if err != nil {
		return Creation{}, err
	}
	cr.Source.Account.KeyID, cr.Source.Account.Data = s.vault.Seal([]byte(a.number), []byte(src.ID))
	return cr, nil
}

// checkedCreation is the creation of src with its account check on
// src.Facts and its events: under the block_fail policy, a check that
// fails is account_check_failed with its reasons.
func (s *Service) checkedCreation(ctx context.Context, src Source, policy string) (Creation, error) {
	src = s.checked(ctx, src)
	if policy == PolicyBlockFail && src.AccountCheck.Result == CheckFail {
		return Creation{}, (&errs.Error{Code: errs.AccountCheckFailed, Param: "account_number",
			Message: "This bank account failed the account check and this environment's account_check_policy is block_fail; nothing was created."}).
			WithDetail("reasons", src.AccountCheck.Reasons)
	}
	events := []event.Event{s.event(ctx, src, event.FundingSourceCreated, src.Status)}
	if src.Status == Verified {
		events = append(events, s.event(ctx, src, event.FundingSourceVerified, Verified))
	}
	return Creation{Source: src, events: events, policy: policy}, nil
}

// create prepares a source with the given status and ownership check and
// inserts it; when also is set, it runs in the same transaction with the
// stored source.
func (s *Service) create(ctx context.Context, c Caller, in Input, status Status, own *Ownership, also ...func(ctx context.Context, tx Store, src Source) error) (Source, error) {
	cr, err := s.prepare(ctx, c, in, status, own)
	if err != nil {
		return Source{}, err
	}
	if len(also) == 0 {
		return s.insert(ctx, s.store, cr)
	}
	var out Source
	err = s.store.WithTx(ctx, func(tx Store) error {
		var err error
		if out, err = s.insert(ctx, tx, cr); err != nil {
			return err
		}
		for _, fn := range also {
			if err := fn(ctx, tx, out); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// insert claims the account number and stores cr's source with its
// events, on st (the pool's store or a transaction's). When cr was
// answered without the account's history and the account has one, it
// reads the history and checks the account again (under block_fail, a
// failing account is account_check_failed and nothing is written) before
// it stores the source; a wrong guess of the holder type is resolved
// from the customer the same way. When the same customer already holds
// the number, a Verified creation upgrades an Unverified source and
// returns it; anything else is a duplicate. Another customer's number is
// account_in_use.
func (s *Service) insert(ctx context.Context, st Store, cr Creation) (Source, error) {
	src := cr.Source
	holder, created, err := st.CreateSource(ctx, src, cr.events)
	if errors.Is(err, ErrAccountHistory) || errors.Is(err, ErrHolderGuess) {
		if errors.Is(err, ErrAccountHistory) {
			if src.Facts, err = st.AccountFacts(ctx, src.Scope.Env, src.AccountFP, src.Scope.MerchantID, src.ID); err != nil {
				return Source{}, fmt.Errorf("read the account facts of source %s: %w", src.ID, err)
			}
		}
		if src.HolderGuessed {
			// Resolved now whichever refusal came first: the statement
			// reports one, and the guess may be wrong too.
			who, err := st.CustomerIdentity(ctx, src.Scope, src.CustomerID)
			if errs.Is(err, errs.NotFound) {
				return Source{}, customerNotFound()
			}
			if err != nil {
				return Source{}, err
			}
			src.AccountHolderType, src.HolderGuessed = defaultHolder(who), false
		}
		if cr, err = s.checkedCreation(ctx, src, cr.policy); err != nil {
			return Source{}, fmt.Errorf("read customer %s: %w", src.CustomerID, err)
		}
		src = cr.Source
		holder, created, err = st.CreateSource(ctx, src, cr.events)
	}
	switch {
	case errors.Is(err, ErrNoCustomer):
		return Source{}, customerNotFound()
	case err != nil:
		return Source{}, fmt.Errorf("store source %s: %w", src.ID, err)
	case created:
		return src, nil // checked by prepare
	case holder.MerchantID != src.Scope.MerchantID || holder.CustomerID != src.CustomerID:
		return Source{}, &errs.Error{Code: errs.AccountInUse, Param: "account_number", Message: AccountInUseMessage}
	}
	var out Source
	err = st.WithTx(ctx, func(tx Store) error {
		existing, err := tx.SourceForUpdate(ctx, src.Scope, holder.SourceID)
		if err != nil {
			return fmt.Errorf("lock source %s: %w", holder.SourceID, err)
		}
		if src.Status == Verified && existing.Status == Unverified {
			if src.Ownership != nil {
				existing.Ownership = src.Ownership
			}
			out, err = s.markVerified(ctx, tx, existing)
			out = s.checked(ctx, out)
			return err
		}
		return (&errs.Error{Code: errs.DuplicateFundingSource, Param: "account_number",
			Message: "This customer already has a funding source with this account number."}).
			WithDetail("funding_source_id", existing.ID)
	})
	return out, err
}

// markVerified sets src Verified, records funding_source.verified and
// the account's verified fact. The fact is history for the account's
// other sources, not for src's own check (src.Facts stays as it was).
func (s *Service) markVerified(ctx context.Context, tx Store, src Source) (Source, error) {
	src.Status = Verified
	if err := s.recordFact(ctx, tx, src, FactVerified, ""); err != nil {
		return Source{}, err
	}
	if err := tx.SetStatus(ctx, src.Scope, src.ID, Verified, s.now(ctx), s.event(ctx, src, event.FundingSourceVerified, Verified)); err != nil {
		return Source{}, fmt.Errorf("mark source %s verified: %w", src.ID, err)
	}
	return src, nil
}

// Get returns a source, removed ones included.
//
// It reads the answer's columns alone while the kept account check holds,
// and the whole source to compute the check again when it does not, so
// the source it returns has what its answer shows and may lack the rest
// (the sealed account, the fingerprints, the receiver fields), which only
// writes use, and they read the source with its row locked.
func (s *Service) Get(ctx context.Context, scope tenant.Scope, id string) (Source, error) {
	src, err := s.store.SourceAnswer(ctx, scope, id)
	if err == nil && src.Stored.holds(s.now(ctx)) {
		return s.checked(ctx, src), nil
	}
	if err == nil {
		src, err = s.store.Source(ctx, scope, id)
	}
	if errs.Is(err, errs.NotFound) {
		return Source{}, sourceNotFound()
	}
	if err != nil {
		return Source{}, fmt.Errorf("read source %s: %w", id, err)
	}
	return s.current(ctx, src)
}

// Removed says whether a list of sources includes the removed ones.
type Removed bool

// The two kinds of list.
const (
	WithoutRemoved Removed = false
	WithRemoved    Removed = true
)

// ListForCustomer returns a page of a customer's sources, newest first.
func (s *Service) ListForCustomer(ctx context.Context, scope tenant.Scope, customerID string, removed Removed, p paging.Page) ([]Source, bool, error) {
	ok, err := s.store.CustomerExists(ctx, scope, customerID)
	if err != nil {
		return nil, false, fmt.Errorf("find customer %s: %w", customerID, err)
	}
	if !ok {
		return nil, false, customerNotFound()
	}
	list, err := s.store.ListSources(ctx, scope, customerID, removed, p)
	if err == nil {
		list, err = s.currentAll(ctx, list)
	}
	return paging.Result(list, err, p)
}

// AccountAvailable reports whether an account number is free in the scope's
// environment (no customer of any merchant holds it).
func (s *Service) AccountAvailable(ctx context.Context, scope tenant.Scope, number string) (bool, error) {
	if err := CheckAccountNumber(number); err != nil {
		return false, err
	}
	_, err := s.store.AccountHolder(ctx, scope.Env, s.vault.Fingerprint(fingerprintLabel, number))
	if errs.Is(err, errs.NotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("find the holder of an account: %w", err)
	}
	return false, nil
}

// RemoveTx marks a source removed in tx, frees its account number and
// records funding_source.removed; what the removal does to the source's
// payments is the caller's (package consequence). A source removed before
// is answered as it is, removed false: a retried delete succeeds, and
// nothing happens twice.
func (s *Service) RemoveTx(ctx context.Context, tx Store, scope tenant.Scope, id string) (src Source, removed bool, err error) {
	src, err = tx.SourceForUpdate(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return Source{}, false, sourceNotFound()
	}
	if err != nil {
		return Source{}, false, fmt.Errorf("lock source %s to remove it: %w", id, err)
	}
	if src.Removed {
		return s.checked(ctx, src), false, nil
	}
	src, err = s.remove(ctx, tx, src, "")
	return s.checked(ctx, src), err == nil, err
}

// remove removes the locked live source src in tx: it frees the account
// number and fires funding_source.removed, with return_code and removed_reason when an ACH
// return with code removes it.
func (s *Service) remove(ctx context.Context, tx Store, src Source, code string) (Source, error) {
	now := s.now(ctx)
	if code != "" {
		reason := achcode.ReturnReason(code)
		src.RemovedReason = &reason
	}
	if err := tx.MarkRemoved(ctx, src.Scope, src.ID, now, src.RemovedReason); err != nil {
		return Source{}, fmt.Errorf("mark source %s removed: %w", src.ID, err)
	}
	if err := tx.ReleaseAccount(ctx, src.Scope.Env, src.Fingerprint, src.ID); err != nil {
		return Source{}, fmt.Errorf("release the account of source %s: %w", src.ID, err)
	}
	src.Removed, src.RemovedAt = true, &now
	data := struct {
		Source
		Status     Status `json:"status"`
		ReturnCode string `json:"return_code,omitempty"`
	}{src, src.Status, code}
	return src, tx.RecordEvent(ctx, event.New(src.Scope, event.FundingSourceRemoved, data, now))
}

// SetNickname changes a live source's nickname (nil or "" removes it) and
// records funding_source.updated when it changed.
func (s *Service) SetNickname(ctx context.Context, scope tenant.Scope, id string, nickname *string) (Source, error) {
	name, err := optional("nickname", nickname, MaxNickname)
	if err != nil {
		return Source{}, err
	}
	var out Source
	err = s.store.WithTx(ctx, func(tx Store) error {
		src, err := s.liveSource(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		out = src
		if ptrEqual(src.Nickname, name) {
			return nil
		}
		if err := tx.SetNickname(ctx, scope, id, name); err != nil {
			return fmt.Errorf("set the nickname of source %s: %w", id, err)
		}
		out.Nickname = name
		return s.record(ctx, tx, out, event.FundingSourceUpdated, out.Status)
	})
	return s.checked(ctx, out), err
}

func ptrEqual(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// RemoveAccountTx removes, in tx, the customer's source holding an
// account number, as RemoveTx does.
func (s *Service) RemoveAccountTx(ctx context.Context, tx Store, scope tenant.Scope, customerID, number string) (Source, bool, error) {
	if err := CheckAccountNumber(number); err != nil {
		return Source{}, false, err
	}
	holder, err := tx.AccountHolder(ctx, scope.Env, s.vault.Fingerprint(fingerprintLabel, number))
	if errs.Is(err, errs.NotFound) || (err == nil && (holder.MerchantID != scope.MerchantID || holder.CustomerID != customerID)) {
		return Source{}, false, accountNotLinked()
	}
	if err != nil {
		return Source{}, false, fmt.Errorf("find the source holding an account: %w", err)
	}
	src, removed, err := s.RemoveTx(ctx, tx, scope, holder.SourceID)
	if errs.Is(err, errs.FundingSourceNotFound) {
		return Source{}, false, accountNotLinked() // removed by a concurrent request
	}
	return src, removed, err
}

// accountNotLinked is the not-found answer to a removal by account
// number: it names what the caller sent, not an id the caller never saw.
func accountNotLinked() error {
	return &errs.Error{Code: errs.FundingSourceNotFound, Param: "account_number",
		Message: "No funding source of this customer holds this account number."}
}

// liveSource locks a source for a write; removed sources count as missing.
func (s *Service) liveSource(ctx context.Context, tx Store, scope tenant.Scope, id string) (Source, error) {
	src, err := tx.SourceForUpdate(ctx, scope, id)
	if errs.Is(err, errs.NotFound) || (err == nil && src.Removed) {
		return Source{}, sourceNotFound()
	}
	if err != nil {
		return Source{}, fmt.Errorf("lock source %s: %w", id, err)
	}
	return src, nil
}
