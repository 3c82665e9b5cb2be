package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestAllowanceDay(t *testing.T) {
	s := openTemp(t, nil)
	ctx := context.Background()
	const client, limit = "198.51.100.1", 3
	midnight := time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC)
	type step struct {
		take      bool
		at        time.Time
		granted   bool
		remaining int
	}
	steps := []step{
		{false, t0, true, 3},
		{true, t0, true, 2},
		{true, t0.Add(time.Hour), true, 1},
		{false, t0, true, 1},
		{true, t0, true, 0},
		{false, t0, false, 0},
		{true, t0, false, 0},
		// A time in another zone on the same UTC day.
		{true, t0.In(time.FixedZone("UTC-5", -5*3600)), false, 0},
		{true, midnight.Add(-time.Nanosecond), false, 0},
		// The next UTC day starts afresh.
		{true, midnight, true, 2},
	}
	for i, st := range steps {
		name := fmt.Sprintf("step %d peek at %s", i, st.at.Format(time.RFC3339Nano))
		call := s.PeekAllowance
		if st.take {
			name = fmt.Sprintf("step %d take at %s", i, st.at.Format(time.RFC3339Nano))
			call = s.TakeAllowance
		}
		got, err := call(ctx, client, st.at, limit)
		if err != nil {
			t.Fatalf("%s: error = %v", name, err)
		}
		resets := midnight
		if !st.at.Before(midnight) {
			resets = midnight.Add(24 * time.Hour)
		}
		want := Allowance{Granted: st.granted, Remaining: st.remaining, Limit: limit, Resets: resets}
		if got != want {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
	// Another client has its own allowance.
	if got, err := s.TakeAllowance(ctx, "198.51.100.2", t0, limit); err != nil || !got.Granted || got.Remaining != 2 {
		t.Errorf("TakeAllowance(other client) = %+v, %v, want granted with 2 left", got, err)
	}
}

func TestAllowanceZeroLimit(t *testing.T) {
	s := openTemp(t, nil)
	for _, limit := range []int{0, -5} {
		got, err := s.TakeAllowance(context.Background(), "c", t0, limit)
		if err != nil || got.Granted || got.Remaining != 0 || got.Limit != 0 {
			t.Errorf("TakeAllowance(limit %d) = %+v, %v, want not granted, 0 left, limit 0", limit, got, err)
		}
	}
}

func TestAllowanceConcurrentExact(t *testing.T) {
	for _, mode := range writeModes {
		t.Run(mode.name, func(t *testing.T) {
			s := openTemp(t, &Options{NoSync: true, writeMode: mode.mode})
			var granted atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, 1000)
			for range 1000 {
				wg.Go(func() {
					a, err := s.TakeAllowance(context.Background(), "203.0.113.9", t0, 100)
					if err != nil {
						errs <- err
						return
					}
					if a.Granted {
						granted.Add(1)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("TakeAllowance() error = %v", err)
			}
			if got := granted.Load(); got != 100 {
				t.Errorf("granted %d of 1000 concurrent calls, want exactly 100", got)
			}
			if a, err := s.PeekAllowance(context.Background(), "203.0.113.9", t0, 100); err != nil || a.Granted || a.Remaining != 0 {
				t.Errorf("PeekAllowance() after = %+v, %v, want exhausted", a, err)
			}
		})
	}
}

func TestUsePayment(t *testing.T) {
	s := openTemp(t, nil)
	ctx := context.Background()
	exp := t0.Add(5 * time.Minute)
	for i, want := range []bool{true, false, false} {
		first, _, err := s.UsePayment(ctx, "0xabc", exp, PaymentUse{})
		if err != nil || first != want {
			t.Errorf("UsePayment() call %d = %v, %v, want %v, nil", i+1, first, err, want)
		}
	}
	if first, _, err := s.UsePayment(ctx, "0xdef", exp, PaymentUse{}); err != nil || !first {
		t.Errorf("UsePayment(other id) = %v, %v, want true, nil", first, err)
	}
	for _, tt := range []struct {
		name string
		id   string
		exp  time.Time
	}{
		{"empty id", "", exp},
		{"zero expiry", "0x1", time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := s.UsePayment(ctx, tt.id, tt.exp, PaymentUse{}); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("UsePayment(%q, %v) error = %v, want ErrInvalidArgument", tt.id, tt.exp, err)
			}
		})
	}
}

func TestUsePaymentConcurrentReplay(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	var firsts atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			first, _, err := s.UsePayment(context.Background(), "0xreplayed", t0.Add(time.Hour), PaymentUse{})
			if err != nil {
				t.Errorf("UsePayment() error = %v", err)
			}
			if first {
				firsts.Add(1)
			}
		})
	}
	wg.Wait()
	if got := firsts.Load(); got != 1 {
		t.Errorf("%d of 200 concurrent uses of one payment were first, want 1", got)
	}
}

// clock is a settable test clock.
type clock struct{ nanos atomic.Int64 }

func (c *clock) Now() time.Time      { return time.Unix(0, c.nanos.Load()).UTC() }
func (c *clock) Set(t time.Time)     { c.nanos.Store(t.UnixNano()) }
func (c *clock) Add(d time.Duration) { c.nanos.Add(int64(d)) }

// bucketLen counts the keys of a bucket.
func bucketLen(t *testing.T, s *Bolt, name []byte) int {
	t.Helper()
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(name).Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPurgeExpired(t *testing.T) {
	var c clock
	c.Set(t0)
	s := openTemp(t, &Options{Now: c.Now})
	ctx := context.Background()
	for i := range 5 {
		if _, err := s.TakeAllowance(ctx, fmt.Sprintf("client-%d", i), c.Now(), 10); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.UsePayment(ctx, fmt.Sprintf("pay-%d", i), c.Now().Add(time.Duration(i)*time.Hour), PaymentUse{}); err != nil {
			t.Fatal(err)
		}
	}
	if a, p := bucketLen(t, s, bucketAllowance), bucketLen(t, s, bucketPayments); a != 5 || p != 5 {
		t.Fatalf("before purge: %d allowance keys, %d payments, want 5, 5", a, p)
	}

	// Two and a half hours on: the next day has not begun, payments 0 and 1
	// are past expiry plus PaymentRetention.
	c.Add(150 * time.Minute)
	if _, _, err := s.UsePayment(ctx, "pay-new", c.Now().Add(time.Hour), PaymentUse{}); err != nil {
		t.Fatal(err)
	}
	if a, p, e := bucketLen(t, s, bucketAllowance), bucketLen(t, s, bucketPayments), bucketLen(t, s, bucketPaymentExp); a != 5 || p != 4 || e != 4 {
		t.Errorf("after 2.5h: %d allowance keys, %d payments, %d expiries, want 5, 4, 4", a, p, e)
	}
	// A purged id is forgotten (its payment expired, so the payment check
	// refuses it anyway); a kept one is still a replay.
	for id, want := range map[string]bool{"pay-0": true, "pay-2": false} {
		if first, _, err := s.UsePayment(ctx, id, c.Now(), PaymentUse{}); err != nil || first != want {
			t.Errorf("UsePayment(%s) = %v, %v, want %v", id, first, err, want)
		}
	}

	// The next day: yesterday's counters go, while running as well as at
	// open.
	c.Add(24 * time.Hour)
	if _, err := s.TakeAllowance(ctx, "client-new", c.Now(), 10); err != nil {
		t.Fatal(err)
	}
	if a, p, e := bucketLen(t, s, bucketAllowance), bucketLen(t, s, bucketPayments), bucketLen(t, s, bucketPaymentExp); a != 1 || p != 0 || e != 0 {
		t.Errorf("a day later: %d allowance keys, %d payments, %d expiries, want 1, 0, 0", a, p, e)
	}
	if _, _, err := s.UsePayment(ctx, "pay-today", c.Now(), PaymentUse{}); err != nil {
		t.Fatal(err)
	}
	c.Add(24 * time.Hour)
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenBolt(path, &Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if a, p, e := bucketLen(t, s, bucketAllowance), bucketLen(t, s, bucketPayments), bucketLen(t, s, bucketPaymentExp); a != 0 || p != 0 || e != 0 {
		t.Errorf("reopened two days later: %d allowance keys, %d payments, %d expiries, want 0, 0, 0", a, p, e)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify() = %v", err)
	}
}
