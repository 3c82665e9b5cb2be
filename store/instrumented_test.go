package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// opLog records what an instrumented store reports.
type opLog struct {
	mu  sync.Mutex
	ops []string // "backend op ok|failed"
}

func (l *opLog) ObserveStoreOp(backend, op string, elapsed time.Duration, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	outcome := "ok"
	if failed {
		outcome = "failed"
	}
	if elapsed < 0 {
		outcome = "negative-duration"
	}
	l.ops = append(l.ops, fmt.Sprintf("%s %s %s", backend, op, outcome))
}

func (l *opLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.ops
	l.ops = nil
	return out
}

// TestInstrumented: every operation of the wrapped store is reported under
// the backend's name, with a failure only for a fault of the store, and
// answers pass through unchanged.
func TestInstrumented(t *testing.T) {
	ctx := context.Background()
	bolt := openTemp(t, nil)
	var log opLog
	s := Instrumented(bolt, "bbolt", &log)
	v := testVerdict("i1", "seller", true, t0)

	steps := []struct {
		name string
		do   func(t *testing.T)
		want []string
	}{
		{"put", func(t *testing.T) { put(t, s, v) }, []string{"bbolt put_verdict ok"}},
		{"receipt found", func(t *testing.T) {
			got, err := s.Receipt(ctx, "i1")
			if err != nil || string(got.Receipt) != string(v.Receipt) {
				t.Errorf("Receipt() = %s, %v", got.Receipt, err)
			}
		}, []string{"bbolt receipt ok"}},
		{"receipt not found is an answer", func(t *testing.T) {
			if _, err := s.Receipt(ctx, "missing"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Receipt(missing) error = %v, want ErrNotFound", err)
			}
		}, []string{"bbolt receipt ok"}},
		{"invalid verdict is a fault", func(t *testing.T) {
			bad := v
			bad.VerificationID, bad.Result = "i2", "maybe"
			if err := s.PutVerdict(ctx, bad); !errors.Is(err, ErrInvalidVerdict) {
				t.Errorf("PutVerdict(bad) error = %v, want ErrInvalidVerdict", err)
			}
		}, []string{"bbolt put_verdict failed"}},
		{"bad cursor is an answer", func(t *testing.T) {
			if _, err := s.Reputation(ctx, "seller", Page{Cursor: "!"}); !errors.Is(err, ErrInvalidPage) {
				t.Errorf("Reputation(bad cursor) error = %v, want ErrInvalidPage", err)
			}
		}, []string{"bbolt reputation ok"}},
		{"reputation and score", func(t *testing.T) {
			rep, err := s.Reputation(ctx, "seller", Page{})
			if err != nil || rep.Total != 1 {
				t.Errorf("Reputation() = %+v, %v", rep, err)
			}
			if _, err := s.Score(ctx, "seller", t0); err != nil {
				t.Errorf("Score() error = %v", err)
			}
		}, []string{"bbolt reputation ok", "bbolt score ok"}},
		{"allowance", func(t *testing.T) {
			a, hold, err := s.ReserveAllowance(ctx, "c", t0, 1)
			if err != nil || !a.Granted || hold == nil {
				t.Fatalf("ReserveAllowance() = %+v, %v, %v", a, hold, err)
			}
			if err := hold.Commit(); err != nil {
				t.Errorf("Commit() error = %v", err)
			}
			hold.Release() // after Commit: a no-op, not reported
			if a, hold, err := s.ReserveAllowance(ctx, "c", t0, 1); err != nil || a.Granted || hold != nil {
				t.Errorf("ReserveAllowance(used up) = %+v, %v, %v", a, hold, err)
			}
			if a, err := s.PeekAllowance(ctx, "c", t0, 1); err != nil || a.Remaining != 0 {
				t.Errorf("PeekAllowance() = %+v, %v", a, err)
			}
			if a, err := s.TakeAllowance(ctx, "d", t0, 1); err != nil || !a.Granted {
				t.Errorf("TakeAllowance() = %+v, %v", a, err)
			}
		}, []string{"bbolt reserve_allowance ok", "bbolt commit_allowance ok", "bbolt reserve_allowance ok",
			"bbolt peek_allowance ok", "bbolt take_allowance ok"}},
		{"payments", func(t *testing.T) {
			use := PaymentUse{State: PaymentPending, RequestKey: "k", Since: t0}
			if first, _, err := s.UsePayment(ctx, "p1", t0.Add(time.Hour), use); err != nil || !first {
				t.Errorf("UsePayment() = %v, %v", first, err)
			}
			if first, _, err := s.UsePayment(ctx, "p1", t0.Add(time.Hour), use); err != nil || first {
				t.Errorf("UsePayment(replay) = %v, %v", first, err)
			}
			if _, found, err := s.LookupPayment(ctx, "p1"); err != nil || !found {
				t.Errorf("LookupPayment() = %v, %v", found, err)
			}
			if err := s.ReleasePayment(ctx, "p1"); err != nil {
				t.Errorf("ReleasePayment() error = %v", err)
			}
			if _, _, err := s.UsePayment(ctx, "p2", t0.Add(time.Hour), use); err != nil {
				t.Errorf("UsePayment(p2) error = %v", err)
			}
			settled := PaymentUse{State: PaymentSettled, RequestKey: "k", Since: t0, Answer: []byte(`{}`)}
			if err := s.SettlePayment(ctx, "p2", settled, nil); err != nil {
				t.Errorf("SettlePayment() error = %v", err)
			}
		}, []string{"bbolt use_payment ok", "bbolt use_payment ok", "bbolt lookup_payment ok", "bbolt release_payment ok",
			"bbolt use_payment ok", "bbolt settle_payment ok"}},
		{"check", func(t *testing.T) {
			if err := s.Check(ctx); err != nil {
				t.Errorf("Check() error = %v", err)
			}
		}, []string{"bbolt check ok"}},
		{"canceled caller is not a fault", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if err := s.PutVerdict(cctx, testVerdict("i3", "seller", false, t0)); !errors.Is(err, context.Canceled) {
				t.Errorf("PutVerdict(canceled) error = %v, want context.Canceled", err)
			}
		}, []string{"bbolt put_verdict ok"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do(t)
			if diff := cmp.Diff(st.want, log.take()); diff != "" {
				t.Errorf("reported operations (-want +got):\n%s", diff)
			}
		})
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close() error = %v", err)
	}
	if got := log.take(); len(got) != 0 {
		t.Errorf("Close reported %v, want nothing", got)
	}
}

func TestIsFault(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("reading: %w", ErrNotFound), false},
		{ErrInvalidArgument, false},
		{ErrInvalidPage, false},
		{fmt.Errorf("put: %w", context.Canceled), false},
		{context.DeadlineExceeded, true},
		{ErrWriteFailing, true},
		{ErrInvalidVerdict, true},
		{errors.New("disk on fire"), true},
	} {
		if got := IsFault(tt.err); got != tt.want {
			t.Errorf("IsFault(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
