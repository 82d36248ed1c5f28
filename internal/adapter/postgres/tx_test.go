package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fundsource/fundsource/internal/adapter/postgres"
	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/internal/testing/pgtest"
)

func newMerchant(id, email string) merchant.Merchant {
	return merchant.Merchant{ID: id, Name: "M " + id, Email: email, PasswordHash: "x", CreatedAt: time.Now().UTC()}
}

func TestWithTxCommitsRollsBackAndNestsUnderSavepoints(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	ctx := context.Background()
	innerErr := errors.New("inner failed")

	err := db.WithTx(ctx, func(tx postgres.Tx) error {
		if err := tx.InsertMerchant(ctx, newMerchant("mer_outer", "outer@example.com")); err != nil {
			return err
		}
		// A failing inner use case undoes only its own writes.
		err := tx.WithTx(ctx, func(tx postgres.Tx) error {
			if err := tx.InsertMerchant(ctx, newMerchant("mer_inner", "inner@example.com")); err != nil {
				return err
			}
			return innerErr
		})
		if !errors.Is(err, innerErr) {
			t.Errorf("inner WithTx error = %v, want %v", err, innerErr)
		}
		// The transaction is still usable after the savepoint rollback.
		return tx.InsertMerchant(ctx, newMerchant("mer_after", "after@example.com"))
	})
	if err != nil {
		t.Fatalf("WithTx: %v", err)
	}
	for id, want := range map[string]bool{"mer_outer": true, "mer_inner": false, "mer_after": true} {
		_, err := db.Merchant(ctx, id)
		if got := err == nil; got != want {
			t.Errorf("merchant %s exists = %v, want %v (err %v)", id, got, want, err)
		}
	}

	// An error from the outer function rolls everything back.
	_ = db.WithTx(ctx, func(tx postgres.Tx) error {
		_ = tx.InsertMerchant(ctx, newMerchant("mer_rolled", "rolled@example.com"))
		return innerErr
	})
	if _, err := db.Merchant(ctx, "mer_rolled"); !errs.Is(err, errs.NotFound) {
		t.Errorf("rolled-back merchant: err = %v, want code %s", err, errs.NotFound)
	}
}

func TestTranslateConflictAndNotFound(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	ctx := context.Background()
	if err := db.InsertMerchant(ctx, newMerchant("mer_a", "same@example.com")); err != nil {
		t.Fatal(err)
	}
	err := db.InsertMerchant(ctx, newMerchant("mer_b", "same@example.com"))
	if got := errs.CodeOf(err); got != errs.Conflict {
		t.Errorf("duplicate email: code = %q, want %q (err %v)", got, errs.Conflict, err)
	}
	_, err = db.Merchant(ctx, "mer_missing")
	if got := errs.CodeOf(err); got != errs.NotFound {
		t.Errorf("missing merchant: code = %q, want %q", got, errs.NotFound)
	}
}

func TestUnreachableDatabaseIsServiceUnavailable(t *testing.T) {
	t.Parallel()
	db, err := postgres.OpenLazy("host=/nonexistent/socket-dir port=1 user=postgres dbname=x sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Ping(context.Background())
	if got := errs.CodeOf(err); got != errs.ServiceUnavailable {
		t.Errorf("ping unreachable: code = %q, want %q (err %v)", got, errs.ServiceUnavailable, err)
	}
	_, err = db.Merchant(context.Background(), "mer_x")
	if got := errs.CodeOf(err); got != errs.ServiceUnavailable {
		t.Errorf("query unreachable: code = %q, want %q (err %v)", got, errs.ServiceUnavailable, err)
	}
}
