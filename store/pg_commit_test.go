package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/verifier-dev/verifier/internal/pgtest"
)

// TestPostgresAllowanceBatched: a process's concurrent ReserveAllowance
// calls for one busy client share transactions (fewer batches than calls),
// and the batches still grant exactly the limit.
func TestPostgresAllowanceBatched(t *testing.T) {
	p, err := OpenPostgres(context.Background(), pgtest.NewDatabase(t), &PostgresOptions{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatalf("OpenPostgres() error = %v", err)
	}
	defer p.Close()
	var batches atomic.Int32
	commit := p.allowance.batches.run
	p.allowance.batches.run = func(batch []pgAllowanceTake) {
		batches.Add(1)
		commit(batch)
	}
	const callers, limit = 64, 10
	var (
		granted atomic.Int32
		wg      sync.WaitGroup
		start   = make(chan struct{})
	)
	for range callers {
		wg.Go(func() {
			<-start
			a, hold, err := p.ReserveAllowance(context.Background(), "busy-client", t0, limit)
			if err != nil {
				t.Errorf("ReserveAllowance() error = %v", err)
				return
			}
			if a.Granted != (hold != nil) {
				t.Errorf("ReserveAllowance() = %+v with hold %v", a, hold)
			}
			if a.Granted {
				granted.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := granted.Load(); n != limit {
		t.Errorf("%d concurrent callers were granted %d free calls, want exactly %d", callers, n, limit)
	}
	t.Logf("%d calls in %d batches", callers, batches.Load())
	if n := batches.Load(); n > callers/2 {
		t.Errorf("%d concurrent calls took %d transactions, want them batched (at most half as many)", callers, n)
	}
	if a, err := p.PeekAllowance(context.Background(), "busy-client", t0, limit); err != nil || a.Granted {
		t.Errorf("PeekAllowance() = %+v, %v; want all %d used", a, err, limit)
	}
}

// TestIsStatementsOwnError: only errors a verdict's own data can cause take
// it out of its batch; the database's state fails the batch at once (a
// read-only database must not cost a retry per verdict).
func TestIsStatementsOwnError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "P0001"}, true},                            // a trigger's RAISE
		{&pgconn.PgError{Code: "23505"}, true},                            // unique violation
		{&pgconn.PgError{Code: "22021"}, true},                            // bad encoding
		{&pgconn.PgError{Code: "40P01"}, true},                            // deadlock
		{&pgconn.PgError{Code: "54000"}, true},                            // program limit
		{fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "23503"}), true}, // foreign key
		{&pgconn.PgError{Code: "25006"}, false},                           // read-only transaction
		{&pgconn.PgError{Code: "57P01"}, false},                           // admin shutdown
		{&pgconn.PgError{Code: "53300"}, false},                           // too many connections
		{errors.New("connection reset"), false},
	} {
		if got := isStatementsOwnError(c.err); got != c.want {
			t.Errorf("isStatementsOwnError(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
