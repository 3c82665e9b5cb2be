package rest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/verifier-dev/verifier/store"
)

// TestStoreNotReady: GET /health's message names a failed write and the
// operating system's cause when the error carries one, and never the
// error's text (which names files).
func TestStoreNotReady(t *testing.T) {
	const secret = "/srv/secret-dir/verifier.db"
	full := &os.PathError{Op: "write", Path: secret, Err: syscall.ENOSPC}
	tests := []struct {
		name string
		err  error
		want string // in the message
	}{
		{"disk full", fmt.Errorf("checking store %s: %w: %w", secret, store.ErrWriteFailing, full),
			"its last write to its store failed (no space left on device), so no verdict can be stored"},
		{"failed write without an OS cause", fmt.Errorf("checking store %s: %w: file resize error: truncate %s: invalid argument", secret, store.ErrWriteFailing, secret),
			"its last write to its store failed, so no verdict can be stored"},
		{"unreadable", fmt.Errorf("checking store %s: %w", secret, store.ErrCorrupt), "its store is not ready"},
		{"deadline", fmt.Errorf("checking store: %w", context.DeadlineExceeded), "its store is not ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := storeNotReady(tt.err)
			if !strings.Contains(got, tt.want) {
				t.Errorf("storeNotReady() = %q, want it to contain %q", got, tt.want)
			}
			if strings.Contains(got, "secret") || strings.Contains(got, "invalid argument") {
				t.Errorf("storeNotReady() = %q quotes the error", got)
			}
		})
	}
}
