package funding

import (
	"context"
	"fmt"
	"github.com/fundsource/fundsource/internal/core/metadata"
	"maps"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// What a source's ACH entries say about who holds the account.
//
// The account holder type (individual or company) is the source's, not
// the customer's: a sole proprietor's customer record may carry a
// business name while the account debited is personal, and the SEC code
// and the consumer protections that come with it follow the account. It
// defaults to company when the customer has a business name.
//
// The receiver name is the customer's first and last name for an
// individual's account and its business name for a company's, until a
// C04 notification of change corrects it; the ach package folds it to
// NACHA's alphabet.
//
// The Individual Identification Number is stored on the source, not
// derived per entry: every entry of the source carries the same one
// (retries and reversals included, which NACHA requires to match the
// original), and a C09 can replace it. The database sets it when the
// source is inserted, from the source's random id (its last 15
// characters, upper-cased): it holds no account data, tells the receiving
// bank's customer service one source from another, and needs no sequence.

// Receiver is what a source's entries say about its holder.
type Receiver struct {
	Company      bool   // account_holder_type is company: CCD entries
	Name         string // the receiver's name, not yet folded
	IndividualID string // ≤ 15 characters
	Addenda      bool   // false once a C13 stopped the source's addenda
	// AccountFP is the HMAC fingerprint of the source's account number
	// (AccountFingerprint's): an entry keeps the one it was sent to, so
	// an answer from the bank can be held to the account it names.
	AccountFP []byte
}

// Receiver reads what a source's entries say about its holder, for
// origination.
func (s *Service) Receiver(ctx context.Context, scope tenant.Scope, id string) (Receiver, error) {
	src, err := s.store.Source(ctx, scope, id)
	if err != nil {
		return Receiver{}, fmt.Errorf("read source %s: %w", id, err)
	}
	r := Receiver{Company: src.AccountHolderType == HolderCompany, IndividualID: src.IndividualID, Addenda: src.AddendaRefusedAt == nil,
		AccountFP: src.Fingerprint}
	if src.ReceiverName != nil {
		r.Name = *src.ReceiverName
		return r, nil
	}
	who, err := s.store.CustomerIdentity(ctx, scope, src.CustomerID)
	if err != nil {
		return Receiver{}, fmt.Errorf("read customer %s: %w", src.CustomerID, err)
	}
	r.Name = who.Person
	if r.Company && who.Company {
		r.Name = who.LegalName
	}
	return r, nil
}

// Update is POST /v2/funding-source/{funding_source_id}: the members sent, each nil
// when not sent.
type Update struct {
	// Nickname is set when the member was sent; its value nil (JSON null
	// or "") removes the nickname.
	Nickname          *NicknameUpdate
	AccountHolderType *string
	// Metadata is merged into the source's: a key set to "" is removed.
	Metadata metadata.Metadata
}

// NicknameUpdate is a nickname member that was sent.
type NicknameUpdate struct{ Value *string }

// Update changes a live source's nickname and account holder type and
// records funding_source.updated when either changed. A bad value of
// either changes nothing. The account holder type decides the SEC code of
// the mandates its customer gives (WEB for an individual, CCD for a
// company), and a debit goes out under its mandate's: so it does not
// change while a mandate of the source is active (409 mandates_active),
// or the source would say one class while its debits go out as another.
func (s *Service) Update(ctx context.Context, scope tenant.Scope, id string, u Update) (Source, error) {
	if u.Nickname == nil && u.AccountHolderType == nil && u.Metadata == nil {
		return Source{}, errs.Invalid("nickname", "Send the nickname to set (null to remove it), account_holder_type or metadata.")
	}
	var name *string
	if u.Nickname != nil {
		var err error
		if name, err = optional("nickname", u.Nickname.Value, MaxNickname); err != nil {
			return Source{}, err
		}
	}
	holder := ""
	if u.AccountHolderType != nil {
		var err error
		if holder, err = holderType(u.AccountHolderType); err != nil {
			return Source{}, err
		}
	}
	var out Source
	err := s.store.WithTx(ctx, func(tx Store) error {
		src, err := s.liveSource(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		out = src
		changed := false
		if u.Nickname != nil && !ptrEqual(src.Nickname, name) {
			if err := tx.SetNickname(ctx, scope, id, name); err != nil {
				return fmt.Errorf("set the nickname of source %s: %w", id, err)
			}
			out.Nickname, changed = name, true
		}
		if holder != "" && holder != src.AccountHolderType {
			set, err := tx.SetHolderType(ctx, scope, id, holder)
			if err != nil {
				return fmt.Errorf("set the holder type of source %s: %w", id, err)
			}
			if !set {
				return mandatesActive()
			}
			out.AccountHolderType, changed = holder, true
		}
		if u.Metadata != nil {
			next, err := metadata.Apply(src.Metadata, u.Metadata)
			if err != nil {
				return err
			}
			if !maps.Equal(next, src.Metadata) {
				if err := tx.SetSourceMetadata(ctx, scope, id, next); err != nil {
					return fmt.Errorf("update the metadata of %s: %w", id, err)
				}
				out.Metadata, changed = next, true
			}
		}
		if !changed {
			return nil
		}
		return s.record(ctx, tx, out, event.FundingSourceUpdated, out.Status)
	})
	return s.checked(ctx, out), err
}

func mandatesActive() error {
	return &errs.Error{Code: errs.MandatesActive, Param: "account_holder_type",
		Message: "This funding source has active mandates, given for its current account_holder_type; revoke them (POST /v2/mandates/{id}/revoke) before changing it."}
}
