package surface

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/fundsource/fundsource/internal/core/errs"
)

// TestClassifyOfAWrappedErrorIsTheErrorsAnswer: context a package boundary
// adds with %w changes neither the status, the code nor the message the
// caller sees; a wrapped plain error is still an internal error.
func TestClassifyOfAWrappedErrorIsTheErrorsAnswer(t *testing.T) {
	ctx := context.Background()
	for _, orig := range []*errs.Error{
		errs.New(errs.PaymentNotFound, "No payment with this id exists."),
		errs.Invalid("amount", "The amount must be positive."),
		errs.New(errs.RetryNotAllowed, "This payment may not be presented again."),
	} {
		want := Classify(ctx, orig)
		got := Classify(ctx, fmt.Errorf("retry payment pay_1: %w", fmt.Errorf("load payment: %w", orig)))
		if got.Status != want.Status || got.Code != want.Code || got.Message != want.Message || got.Param != want.Param {
			t.Errorf("wrapped %s: got %+v, want %+v", orig.Code, got, want)
		}
		if got.Message != orig.Message {
			t.Errorf("wrapped %s: message %q, want exactly %q", orig.Code, got.Message, orig.Message)
		}
	}
	if o := Classify(ctx, fmt.Errorf("insert payment pay_1: %w", fmt.Errorf("connection reset"))); o.Status != http.StatusInternalServerError || o.Message != internalMessage {
		t.Errorf("wrapped plain error: %+v, want a 500 with the internal message", o)
	}
}
