package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable: the store could not be reached, or did not answer within
// the call's deadline. The call may be sent again (see [Unavailable]).
var ErrUnavailable = errors.New("the store could not be reached or did not answer in time")

// Unavailable reports whether err, returned by a [Store] call, means that
// the store could not be reached or did not answer in time — the
// service's 503 unavailable, retryable — rather than that it answered
// with a fault (a corrupt file, an invariant broken: 500 internal_error).
// This is the one rule by which every store error is answered:
//
//   - unavailable: ErrUnavailable, ErrOwnerLost, ErrLocked, ErrWriteFailing
//     (a full or failing disk), the call's context ended, a connection
//     refused, reset or closed, a network timeout, and PostgreSQL's
//     connection (08), resources (53), operator intervention (57: shutdown,
//     query cancelled) and transaction rollback (40: serialization,
//     deadlock) classes;
//   - everything else — ErrCorrupt, ErrSchemaVersion, ErrDuplicate,
//     ErrInvalidVerdict, a PostgreSQL error of any other class — is a fault
//     the store answered with.
//
// Answers about the caller's input (ErrNotFound, ErrInvalidArgument,
// ErrInvalidPage) are neither: callers answer them before asking this.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case strings.HasPrefix(pg.Code, "08"), strings.HasPrefix(pg.Code, "53"),
			strings.HasPrefix(pg.Code, "57"), strings.HasPrefix(pg.Code, "40"):
			return true
		}
		return false
	}
	for _, sentinel := range []error{
		ErrUnavailable, ErrOwnerLost, ErrLocked, ErrWriteFailing,
		context.DeadlineExceeded, context.Canceled,
		io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE,
		pgconn.ErrConnClosed,
	} {
		if errors.Is(err, sentinel) {
			return true
		}
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connect) || errors.As(err, &netErr) || pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}
