package postgres

import (
	"context"
	"time"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/funding"
)

const insertChange = `
INSERT INTO funding_source_changes (merchant_id, environment, id, funding_source_id, change_code, original_trace,
    old_routing_number, old_bank_name, old_last_four, old_account_type, old_account_key_id, old_account_ciphertext,
    created_at, old_receiver_name, old_individual_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
ON CONFLICT (original_trace, change_code) WHERE original_trace IS NOT NULL DO NOTHING`

// InsertChange stores a source's change with the values it replaces; it
// reports false when the same entry's change is stored already.
func (q queries) InsertChange(ctx context.Context, c funding.Change) (bool, error) {
	o := c.Old
	res, err := q.ex.ExecContext(ctx, insertChange, o.Scope.MerchantID, o.Scope.Env, c.ID, o.ID, c.ChangeCode,
		c.OriginalTrace, o.RoutingNumber, o.BankName, o.LastFour, o.AccountType, o.Account.KeyID, o.Account.Data,
		c.CreatedAt, o.ReceiverName, o.IndividualID)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

const moveAccount = `
UPDATE account_numbers SET fingerprint = $4, created_at = $5
WHERE environment = $1 AND fingerprint = $2 AND funding_source_id = $3`

// MoveAccount moves src's account-number claim to the fingerprint fp;
// errs.AccountInUse when another source holds that number.
func (q queries) MoveAccount(ctx context.Context, src funding.Source, fp []byte, at time.Time) error {
	res, err := q.ex.ExecContext(ctx, moveAccount, src.Scope.Env, src.Fingerprint, src.ID, fp, at)
	if err = oneRow(res, translate(err), errs.NotFound); errs.Is(err, errs.Conflict) {
		return &errs.Error{Code: errs.AccountInUse, Param: "corrected_data.account_number", Message: funding.AccountInUseMessage}
	}
	return err
}

const correctSource = `
UPDATE funding_sources SET routing_number = $4, bank_name = $5, last_four = $6, account_type = $7,
    account_key_id = $8, account_ciphertext = $9, fingerprint = $10, account_fp = $11,
    receiver_name = $12, individual_id = $13, addenda_refused_at = $14,
    check_result = CASE WHEN account_fp IS DISTINCT FROM $11 THEN NULL ELSE check_result END,
    check_seq = check_seq + CASE WHEN account_fp IS DISTINCT FROM $11 THEN 1 ELSE 0 END
WHERE ` + byID

// CorrectSource stores src's bank account and receiver details as a
// change corrected them; a source moved to another account loses its
// kept account check.
func (q queries) CorrectSource(ctx context.Context, src funding.Source) error {
	res, err := q.ex.ExecContext(ctx, correctSource, src.Scope.MerchantID, src.Scope.Env, src.ID, src.RoutingNumber,
		src.BankName, src.LastFour, src.AccountType, src.Account.KeyID, src.Account.Data, src.Fingerprint, src.AccountFP,
		src.ReceiverName, src.IndividualID, src.AddendaRefusedAt)
	return oneRow(res, err, errs.NotFound)
}
