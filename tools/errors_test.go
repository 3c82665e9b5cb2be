package tools_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
)

// TestAsErrorStoreRule: a store error becomes 503 unavailable with
// Retry-After when the store could not be reached or did not answer in
// time, and 500 internal_error when it answered with a fault — the one
// rule of README's errors table.
func TestAsErrorStoreRule(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		status int
	}{
		{"allowance step past the deadline", fmt.Errorf("taking free allowance: %w", context.DeadlineExceeded), http.StatusServiceUnavailable},
		{"owner lost", fmt.Errorf("taking free allowance: %w", store.ErrOwnerLost), http.StatusServiceUnavailable},
		{"database restarting", fmt.Errorf("taking free allowance: %w", &pgconn.PgError{Code: "57P01"}), http.StatusServiceUnavailable},
		{"failing disk", fmt.Errorf("recording free call: %w", store.ErrWriteFailing), http.StatusServiceUnavailable},
		{"corrupt store", fmt.Errorf("reading payment: %w", store.ErrCorrupt), http.StatusInternalServerError},
		{"broken invariant", fmt.Errorf("storing: %w", store.ErrDuplicate), http.StatusInternalServerError},
		{"any other fault", errors.New("boom"), http.StatusInternalServerError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := tools.AsError(tt.err)
			if e.Status != tt.status {
				t.Fatalf("AsError(%v) = %d %s, want %d", tt.err, e.Status, e.Code, tt.status)
			}
			if tt.status == http.StatusServiceUnavailable {
				if e.Code != tools.CodeUnavailable || !e.Retryable || e.RetryAfter == nil || e.Header.Get("Retry-After") == "" {
					t.Errorf("AsError(%v) = %+v, want unavailable, retryable, with Retry-After", tt.err, e)
				}
			} else if e.Code != tools.CodeInternal || e.Retryable {
				t.Errorf("AsError(%v) = %+v, want internal_error, not retryable", tt.err, e)
			}
		})
	}
}
