package errs

import (
	"errors"
	"fmt"
	"testing"
)

// TestWrappedErrorKeepsItsCodeAndMessage: an Error wrapped with %w (once or
// twice, as package boundaries do) is still found by As, Is and CodeOf with
// the same code, message, param and details; a %v wrap loses it.
func TestWrappedErrorKeepsItsCodeAndMessage(t *testing.T) {
	orig := Invalid("amount", "The amount must be positive.").WithDetail("limit", "10.00")
	wrapped := fmt.Errorf("create payment pay_1: %w", fmt.Errorf("insert payment: %w", orig))
	e, ok := As(wrapped)
	if !ok || e != orig {
		t.Fatalf("As(wrapped) = %v, %v; want the original error", e, ok)
	}
	if e.Message != "The amount must be positive." || e.Param != "amount" || e.Details["limit"] != "10.00" {
		t.Fatalf("wrapped error changed: %+v", e)
	}
	if !Is(wrapped, InvalidRequest) || CodeOf(wrapped) != InvalidRequest {
		t.Fatalf("Is/CodeOf lost the code through wrapping")
	}
	if _, ok := As(fmt.Errorf("no chain: %v", orig)); ok {
		t.Fatal("As found an error a percent-v wrap does not carry")
	}
	if CodeOf(errors.New("plain")) != "" {
		t.Fatal("CodeOf of a plain error is not empty")
	}
}
