package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestUnavailable: the one rule that splits store errors into 503
// unavailable (the store could not be reached or did not answer in time)
// and 500 internal_error (it answered with a fault).
func TestUnavailable(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"deadline", fmt.Errorf("taking allowance: %w", context.DeadlineExceeded), true},
		{"owner lost", fmt.Errorf("store call PutVerdict: %w: EOF", ErrOwnerLost), true},
		{"owner did not run it", errExpired, true},
		{"no answer within the deadline", fmt.Errorf("store call X: %w", ErrUnavailable), true},
		{"locked", ErrLocked, true},
		{"failing disk", ErrWriteFailing, true},
		{"connection refused", &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"postgres restarting", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{"postgres starting", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true},
		{"postgres connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"postgres too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"postgres serialization", &pgconn.PgError{Code: "40001"}, true},
		{"postgres conn closed", fmt.Errorf("reading: %w", pgconn.ErrConnClosed), true},
		{"corrupt", fmt.Errorf("reading: %w", ErrCorrupt), false},
		{"schema version", ErrSchemaVersion, false},
		{"duplicate", ErrDuplicate, false},
		{"invalid verdict", ErrInvalidVerdict, false},
		{"postgres unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"postgres undefined table", &pgconn.PgError{Code: "42P01"}, false},
		{"some other fault", errors.New("invariant broken"), false},
		{"remote corrupt", (&wireError{Kind: "corrupt", Message: "x"}).err(), false},
		{"remote expired", toWire(errExpired).err(), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Unavailable(tt.err); got != tt.want {
				t.Errorf("Unavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestWireErrorKeepsNotRun: an error the owner did not run crosses the
// socket as one: the client may send the call again.
func TestWireErrorKeepsNotRun(t *testing.T) {
	for _, err := range []error{errServerClosed, errExpired} {
		back := toWire(err).err()
		if !errors.Is(back, errNotRun) {
			t.Errorf("%v after the wire: not errNotRun", err)
		}
	}
	if back := toWire(fmt.Errorf("x: %w", ErrOwnerLost)).err(); errors.Is(back, errNotRun) || !errors.Is(back, ErrOwnerLost) {
		t.Errorf("an owner lost during the call after the wire = %v: want ErrOwnerLost, not errNotRun", back)
	}
}
