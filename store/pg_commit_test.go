package store

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
