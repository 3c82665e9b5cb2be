package store

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/diskfault"
)

// breakWrites makes every write to s's file fail until the returned
// function is called (and at the latest when the test ends).
func breakWrites(t *testing.T, s *Bolt) (restore func()) {
	t.Helper()
	undo, err := diskfault.BreakWrites(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	done := false
	restore = func() {
		if done {
			return
		}
		done = true
		if err := undo(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(restore)
	return restore
}

// TestCheckReportsFailedWrite: Check reports a commit that failed (the file
// refuses writes, as on a full disk) until a later commit succeeds, in every
// write mode, and a caller's own error (a duplicate) does not count.
func TestCheckReportsFailedWrite(t *testing.T) {
	ctx := context.Background()
	for _, m := range writeModes {
		t.Run(m.name, func(t *testing.T) {
			s := openTemp(t, &Options{writeMode: m.mode})
			first := testVerdict("first", "agent", true, t0)
			put(t, s, first)
			if err := s.Check(ctx); err != nil {
				t.Fatalf("Check() before the fault = %v", err)
			}

			restore := breakWrites(t, s)
			lost := testVerdict("lost", "agent", true, t0.Add(time.Second))
			if err := s.PutVerdict(ctx, lost); err == nil {
				t.Fatal("PutVerdict() with the file refusing writes = nil, want an error")
			}
			err := s.Check(ctx)
			if !errors.Is(err, ErrWriteFailing) {
				t.Fatalf("Check() after a failed write = %v, want ErrWriteFailing", err)
			}
			if _, err := s.Receipt(ctx, first.VerificationID); err != nil {
				t.Errorf("Receipt() of the verdict stored before the fault = %v", err)
			}

			restore()
			if err := s.Check(ctx); !errors.Is(err, ErrWriteFailing) {
				t.Errorf("Check() with the disk back but no write yet = %v, want ErrWriteFailing still", err)
			}
			put(t, s, testVerdict("after", "agent", false, t0.Add(2*time.Second)))
			if err := s.Check(ctx); err != nil {
				t.Errorf("Check() after a successful write = %v, want nil", err)
			}
			changed := first
			changed.Result, changed.Overall = ResultFail, Ratio{Ratio: 0.5, Passed: 1, Total: 2}
			if err := s.PutVerdict(ctx, changed); !errors.Is(err, ErrDuplicate) {
				t.Fatalf("PutVerdict() of a changed verdict = %v, want ErrDuplicate", err)
			}
			if err := s.Check(ctx); err != nil {
				t.Errorf("Check() after a caller's duplicate = %v, want nil (not a store fault)", err)
			}
			if _, err := s.Receipt(ctx, lost.VerificationID); !errors.Is(err, ErrNotFound) {
				t.Errorf("Receipt() of the verdict whose write failed = %v, want ErrNotFound", err)
			}
			if err := s.Verify(ctx); err != nil {
				t.Errorf("Verify() after the fault = %v", err)
			}
		})
	}
}

// TestWriteProbe: with ProbeInterval set and no caller writing, Check
// reports a file that stopped taking writes, then that it takes them again;
// Close stops the probe's goroutine.
func TestWriteProbe(t *testing.T) {
	ctx := context.Background()
	before := runtime.NumGoroutine()
	s, err := OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), &Options{ProbeInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check() on a new store = %v", err)
	}

	restore := breakWrites(t, s)
	waitCheck(t, s, func(err error) bool { return errors.Is(err, ErrWriteFailing) }, "ErrWriteFailing from the probe")
	restore()
	waitCheck(t, s, func(err error) bool { return err == nil }, "nil once the probe succeeds again")

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.probeDone:
	default:
		t.Error("the probe still runs after Close")
	}
	_ = s.Close() // a second Close must not panic (closing the stop channel again)
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before OpenBolt", n, before)
	}
}

// waitCheck polls Check until ok accepts its result, for up to 10 s.
func waitCheck(t *testing.T, s *Bolt, ok func(error) bool, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.Check(context.Background())
		if ok(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Check() = %v after 10 s, want %s", err, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
