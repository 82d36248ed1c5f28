package funding

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/core/event"
	"github.com/fundsource/fundsource/internal/core/ids"
	"github.com/fundsource/fundsource/internal/core/tenant"
)

// Notifications of change (NOC): the receiving bank posted an entry but
// says a detail of the account was wrong, and sends the right one. The
// originator must apply it before its next entry to the account, so a
// change corrects the source in place: a new account number is sealed and
// fingerprinted as at creation (its claim moves to the new number), the
// routing number brings its bank name from the routing directory, and the
// replaced values are kept, the old number still sealed, in the source's
// history of changes. The receiver's details change the same way: a C04
// replaces the name the entries carry, a C09 the Individual
// Identification Number, and a C13 (the receiving bank could not read the
// addenda) stops the source's addenda; their old values are kept in the
// history too. Only a change of the account itself is a fact of the
// account's history (corrected_by_noc).

// The change codes a source takes: what each one corrects.
const (
	ChangeAccount        = "C01" // account number
	ChangeRouting        = "C02" // routing number
	ChangeRoutingAccount = "C03" // routing and account numbers
	ChangeName           = "C04" // the receiver's name
	ChangeType           = "C05" // account type (the transaction code)
	ChangeAccountType    = "C06" // account number and type
	ChangeAll            = "C07" // routing number, account number and type
	ChangeIndividualID   = "C09" // the Individual Identification Number
	ChangeAddenda        = "C13" // addenda format error: no more addenda
)

// changeFields says which corrected values each change code carries:
// routing number, account number, account type, name, individual id.
var changeFields = map[string][5]bool{
	ChangeAccount:        {false, true, false, false, false},
	ChangeRouting:        {true, false, false, false, false},
	ChangeRoutingAccount: {true, true, false, false, false},
	ChangeName:           {false, false, false, true, false},
	ChangeType:           {false, false, true, false, false},
	ChangeAccountType:    {false, true, true, false, false},
	ChangeAll:            {true, true, true, false, false},
	ChangeIndividualID:   {false, false, false, false, true},
	ChangeAddenda:        {false, false, false, false, false},
}

// ChangeCodes are the change codes a source takes, in order.
var ChangeCodes = []string{ChangeAccount, ChangeRouting, ChangeRoutingAccount, ChangeName, ChangeType, ChangeAccountType,
	ChangeAll, ChangeIndividualID, ChangeAddenda}

// Limits of a correction's receiver details, the widths of their fields
// in an entry.
const (
	MaxReceiverName = 22
	MaxIndividualID = 15
)

const changePrefix = "fsc_"

// Correction is a notification of change: its code, the corrected values
// the code carries, and the entry it is about (OriginalTrace, "" for a
// sandbox simulation).
type Correction struct {
	ChangeCode    string `json:"change_code"`
	OriginalTrace string `json:"-"`
	CorrectedData `json:"corrected_data"`
}

// CorrectedData are a correction's new values; a change code requires
// the ones it corrects and refuses the others.
type CorrectedData struct {
	RoutingNumber string `json:"routing_number,omitempty"`
	AccountNumber string `json:"account_number,omitempty"`
	AccountType   string `json:"account_type,omitempty"`  // checking or savings
	Name          string `json:"name,omitempty"`          // C04: ≤ 22 printable ASCII characters
	IndividualID  string `json:"individual_id,omitempty"` // C09: ≤ 15 printable ASCII characters
}

// Change is a source's change as stored: the source as it was before.
type Change struct {
	ID            string
	ChangeCode    string
	OriginalTrace *string
	Old           Source
	CreatedAt     time.Time
}

// check validates c against its change code.
func (s *Service) check(env tenant.Environment, c Correction) (bankName *string, err error) {
	f, ok := changeFields[c.ChangeCode]
	if !ok {
		return nil, errs.Invalid("change_code", "change_code must be one of "+strings.Join(ChangeCodes, ", ")+".")
	}
	given := [5]bool{c.RoutingNumber != "", c.AccountNumber != "", c.AccountType != "", c.Name != "", c.IndividualID != ""}
	names := [5]string{"routing_number", "account_number", "account_type", "name", "individual_id"}
	for i := range f {
		if f[i] != given[i] {
			verb := "requires"
			if given[i] {
				verb = "takes no"
			}
			return nil, errs.Invalid("corrected_data."+names[i], c.ChangeCode+" "+verb+" corrected_data."+names[i]+".")
		}
	}
	if f[0] {
		name, err := s.banks.Check(c.RoutingNumber)
		if err != nil {
			return nil, withParam(err, "corrected_data.routing_number")
		}
		if env.Live() && s.banks.SandboxOnly(c.RoutingNumber) {
			return nil, &errs.Error{Code: errs.InvalidRoutingNumber, Param: "corrected_data.routing_number",
				Message: "routing_number is a sandbox test number; production needs a real bank's routing number"}
		}
		if name != "" {
			bankName = &name
		}
	}
	if f[1] {
		if err := CheckAccountNumber(c.AccountNumber); err != nil {
			return nil, withParam(err, "corrected_data.account_number")
		}
	}
	if f[2] && c.AccountType != Checking && c.AccountType != Savings {
		return nil, &errs.Error{Code: errs.InvalidAccountType, Param: "corrected_data.account_type",
			Message: `account_type must be "checking" or "savings"`}
	}
	if f[3] && !printable(c.Name, MaxReceiverName) {
		return nil, errs.Invalid("corrected_data.name", "corrected_data.name must be 1 to 22 printable ASCII characters, not only spaces.")
	}
	if f[4] && !printable(c.IndividualID, MaxIndividualID) {
		return nil, errs.Invalid("corrected_data.individual_id", "corrected_data.individual_id must be 1 to 15 printable ASCII characters, not only spaces.")
	}
	return bankName, nil
}

// printable reports whether v is 1 to n printable ASCII characters, not
// all spaces: what an entry's field can carry.
func printable(v string, n int) bool {
	if strings.TrimSpace(v) == "" || len(v) > n {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < ' ' || v[i] > '~' {
			return false
		}
	}
	return true
}

func withParam(err error, param string) error {
	if e, ok := errs.As(err); ok {
		c := *e
		c.Param = param
		return &c
	}
	return err
}

// ApplyChangeTx applies a notification of change to a source in the
// caller's transaction tx (see the comment at the top of the file) and
// fires funding_source.updated with change_code. It reports false, having
// changed nothing, when the same entry's change was applied already or the
// source is removed. A corrected account number held by another source is
// account_in_use.
func (s *Service) ApplyChangeTx(ctx context.Context, tx Store, scope tenant.Scope, id string, c Correction) (bool, error) {
	bankName, err := s.check(scope.Env, c)
	if err != nil {
		return false, err
	}
	src, err := tx.SourceForUpdate(ctx, scope, id)
	if errs.Is(err, errs.NotFound) {
		return false, sourceNotFound()
	}
	if err != nil {
		return false, fmt.Errorf("lock source %s for a change: %w", id, err)
	}
	if src.Removed {
		return false, nil
	}
	now := s.now(ctx).UTC()
	ch := Change{ID: ids.New(changePrefix), ChangeCode: c.ChangeCode, Old: src, CreatedAt: now}
	if c.OriginalTrace != "" {
		ch.OriginalTrace = &c.OriginalTrace
	}
	if inserted, err := tx.InsertChange(ctx, ch); err != nil {
		return false, fmt.Errorf("record change %s of source %s: %w", ch.ID, id, err)
	} else if !inserted {
		return false, nil
	}
	// The fact is the account as it was: the number someone linked was
	// wrong. The source moves to the corrected account's history. A
	// receiver's details are no fact of the account.
	if f := changeFields[c.ChangeCode]; f[0] || f[1] || f[2] {
		if err := s.recordFact(ctx, tx, src, FactCorrected, c.ChangeCode); err != nil {
			return false, err
		}
	}
	switch c.ChangeCode {
	case ChangeName:
		name := strings.TrimSpace(c.Name)
		src.ReceiverName = &name
	case ChangeIndividualID:
		src.IndividualID = strings.TrimSpace(c.IndividualID)
	case ChangeAddenda:
		if src.AddendaRefusedAt == nil {
			src.AddendaRefusedAt = &now
		}
	}
	number := ""
	if c.AccountNumber == "" && c.RoutingNumber != "" {
		n, err := s.vault.Open(src.Account.KeyID, src.Account.Data, []byte(src.ID))
		if err != nil {
			return false, fmt.Errorf("open the account of source %s: %w", src.ID, err)
		}
		number = string(n)
	}
	if c.RoutingNumber != "" {
		src.RoutingNumber, src.BankName = c.RoutingNumber, bankName
		if bankName == nil {
			src.BankName = ch.Old.BankName
		}
	}
	if c.AccountType != "" {
		src.AccountType = c.AccountType
	}
	if n := c.AccountNumber; n != "" {
		fp := s.vault.Fingerprint(fingerprintLabel, n)
		if err := tx.MoveAccount(ctx, src, fp, now); err != nil {
			return false, fmt.Errorf("move source %s to its corrected account: %w", src.ID, err)
		}
		src.Fingerprint, src.LastFour = fp, n[len(n)-4:]
		src.Account.KeyID, src.Account.Data = s.vault.Seal([]byte(n), []byte(src.ID))
		number = n
	}
	if number != "" {
		src.AccountFP = s.accountFP(src.RoutingNumber, number)
	}
	if err := tx.CorrectSource(ctx, src); err != nil {
		return false, fmt.Errorf("correct source %s: %w", src.ID, err)
	}
	if number != "" {
		// The source now holds the corrected account: its link joins that
		// account's history, so the account's later facts mark its kept
		// check as they mark every source linked to it (checkstore.go);
		// and its own check says the account was corrected
		// (corrected_by_noc), as after a change that keeps the account
		// (C05), rather than reading as an account with no history.
		if err := s.recordFact(ctx, tx, src, FactLinked, ""); err != nil {
			return false, err
		}
		if err := s.recordFact(ctx, tx, src, FactCorrected, c.ChangeCode); err != nil {
			return false, err
		}
	}
	data := struct {
		Source
		Status     Status `json:"status"`
		ChangeCode string `json:"change_code"`
	}{src, src.Status, c.ChangeCode}
	return true, tx.RecordEvent(ctx, event.New(scope, event.FundingSourceUpdated, data, now))
}

// SimulateChange applies a notification of change to a sandbox source
// (POST /v2/sandbox/funding-source/{funding_source_id}/notification-of-change) as an
// imported one would be, and returns the corrected source as Get answers
// it once the change is committed: its account check read from the
// account's facts, not from a source without them.
func (s *Service) SimulateChange(ctx context.Context, scope tenant.Scope, id string, c Correction) (Source, error) {
	if err := tenant.SandboxOnly(scope); err != nil {
		return Source{}, err
	}
	c.OriginalTrace = ""
	err := s.store.WithTx(ctx, func(tx Store) error {
		src, err := s.liveSource(ctx, tx, scope, id)
		if err != nil {
			return err
		}
		_, err = s.ApplyChangeTx(ctx, tx, scope, src.ID, c)
		return err
	})
	if err != nil {
		return Source{}, err
	}
	return s.Get(ctx, scope, id)
}
