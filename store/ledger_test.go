package store

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestHoldRidesOnTheVerdictCommit: a free call held before a verdict is
// written is in the file once PutVerdict returns, and committing it then
// costs no commit of its own.
func TestHoldRidesOnTheVerdictCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	s := openAt(t, path)
	ctx := context.Background()
	a, h, err := s.ReserveAllowance(ctx, "192.0.2.1", t0, 3)
	if err != nil || h == nil || !a.Granted || a.Remaining != 2 {
		t.Fatalf("ReserveAllowance() = %+v, %v, %v; want granted with 2 left", a, h, err)
	}
	if got := fileCount(t, s, "192.0.2.1", t0); got != 0 {
		t.Errorf("count in the file after the reservation = %d, want 0 (held in memory)", got)
	}
	if err := s.PutVerdict(ctx, testVerdict("v1", "agent-1", true, t0)); err != nil {
		t.Fatal(err)
	}
	if got := fileCount(t, s, "192.0.2.1", t0); got != 1 {
		t.Errorf("count in the file after the verdict's commit = %d, want 1", got)
	}
	commits := s.ledger.nextSnap
	if err := h.Commit(); err != nil {
		t.Fatalf("Commit() = %v", err)
	}
	if s.ledger.nextSnap != commits {
		t.Errorf("Commit() after the verdict's commit committed again (%d snapshots, was %d)", s.ledger.nextSnap, commits)
	}
	if err := h.Commit(); err != nil {
		t.Errorf("second Commit() = %v, want nil", err)
	}
	h.Release() // a no-op after Commit
	if a, err := s.PeekAllowance(ctx, "192.0.2.1", t0, 3); err != nil || a.Remaining != 2 {
		t.Errorf("PeekAllowance() after Commit and Release = %+v, %v; want 2 left", a, err)
	}
	if n := unwritten(s); n != 0 {
		t.Errorf("ledger holds %d counts not in the file once every count was written, want 0", n)
	}
}

// TestHoldRelease: a released call is free again at once, whether its count
// was written yet or not, and the file follows with the next commit.
func TestHoldRelease(t *testing.T) {
	ctx := context.Background()
	const client, limit = "192.0.2.2", 2
	for _, tt := range []struct {
		name         string
		writtenFirst bool // a commit wrote the held call before the release
	}{
		{"before any commit", false},
		{"after a commit wrote it", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "verifier.db")
			s := openAt(t, path)
			_, h, err := s.ReserveAllowance(ctx, client, t0, limit)
			if err != nil || h == nil {
				t.Fatalf("ReserveAllowance() = %v, %v", h, err)
			}
			if tt.writtenFirst {
				if err := s.PutVerdict(ctx, testVerdict("v1", "", true, t0)); err != nil {
					t.Fatal(err)
				}
			}
			h.Release()
			h.Release() // a no-op
			if err := h.Commit(); !errors.Is(err, errHoldReleased) {
				t.Errorf("Commit() after Release = %v, want errHoldReleased", err)
			}
			if a, err := s.PeekAllowance(ctx, client, t0, limit); err != nil || a.Remaining != limit {
				t.Errorf("PeekAllowance() after Release = %+v, %v; want %d left", a, err, limit)
			}
			if err := s.PutVerdict(ctx, testVerdict("v2", "", true, t0)); err != nil {
				t.Fatal(err)
			}
			if got := fileCount(t, s, client, t0); got != 0 {
				t.Errorf("count in the file after the next commit = %d, want 0", got)
			}
			if n := unwritten(s); n != 0 {
				t.Errorf("ledger holds %d counts not in the file, want 0", n)
			}
		})
	}
}

// TestHoldCommitAlone: with no other write, Commit writes the count itself.
func TestHoldCommitAlone(t *testing.T) {
	s := openTemp(t, nil)
	_, h, err := s.ReserveAllowance(context.Background(), "192.0.2.3", t0, 1)
	if err != nil || h == nil {
		t.Fatalf("ReserveAllowance() = %v, %v", h, err)
	}
	if err := h.Commit(); err != nil {
		t.Fatalf("Commit() = %v", err)
	}
	if got := fileCount(t, s, "192.0.2.3", t0); got != 1 {
		t.Errorf("count in the file after Commit = %d, want 1", got)
	}
	a, h2, err := s.ReserveAllowance(context.Background(), "192.0.2.3", t0, 1)
	if err != nil || h2 != nil || a.Granted {
		t.Errorf("ReserveAllowance() past the limit = %+v, %v, %v; want refused without a hold", a, h2, err)
	}
}

// TestHoldsSurviveRestart: committed calls and calls still held when the
// store closes count after reopening; released ones do not.
func TestHoldsSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	ctx := context.Background()
	const client, limit = "192.0.2.4", 10
	s, err := OpenBolt(path, &Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	for i, fate := range []string{"commit", "hold", "release", "commit", "hold"} {
		_, h, err := s.ReserveAllowance(ctx, client, t0, limit)
		if err != nil || h == nil {
			t.Fatalf("reservation %d = %v, %v", i, h, err)
		}
		switch fate {
		case "commit":
			if err := h.Commit(); err != nil {
				t.Fatal(err)
			}
		case "release":
			h.Release()
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	if a, err := s.PeekAllowance(ctx, client, t0, limit); err != nil || a.Remaining != limit-4 {
		t.Errorf("after reopening: %+v, %v; want %d left (2 committed, 2 held at close)", a, err, limit-4)
	}
}

// TestHoldsExactUnderConcurrency: 1000 concurrent reservations against a
// limit of 100, each committed or released at random alongside verdict
// writes: never more than 100 are held at once, and the file ends with the
// committed ones.
func TestHoldsExactUnderConcurrency(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	s := openAt(t, path)
	ctx := context.Background()
	const client, limit, n = "203.0.113.8", 100, 1000
	var (
		wg                                 sync.WaitGroup
		mu                                 sync.Mutex
		held, maxHeld, committed, released int
		errs                               []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for i := range n {
		wg.Go(func() {
			_, h, err := s.ReserveAllowance(ctx, client, t0, limit)
			if err != nil || h == nil {
				if err != nil {
					fail(err)
				}
				return
			}
			// held counts after the ledger does and stops counting before
			// it, so it never exceeds what the ledger holds.
			mu.Lock()
			held++
			maxHeld = max(maxHeld, held)
			mu.Unlock()
			if i%3 == 0 {
				mu.Lock()
				held, released = held-1, released+1
				mu.Unlock()
				h.Release()
				return
			}
			if err := s.PutVerdict(ctx, testVerdict("v"+strconv.Itoa(i), "agent", true, t0)); err != nil {
				fail(err)
				return
			}
			if err := h.Commit(); err != nil {
				fail(err)
				return
			}
			mu.Lock()
			committed++
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d errors, first: %v", len(errs), errs[0])
	}
	if maxHeld > limit || committed > limit || released == 0 {
		t.Errorf("at most %d held at once, %d committed, %d released; want at most %d held and committed, some released", maxHeld, committed, released, limit)
	}
	if got := fileCount(t, s, client, t0); got != uint64(committed) {
		t.Errorf("count in the file = %d, want the %d committed", got, committed)
	}
	a, err := s.PeekAllowance(ctx, client, t0, limit)
	if err != nil || a.Remaining != limit-committed {
		t.Errorf("PeekAllowance() = %+v, %v; want %d left", a, err, limit-committed)
	}
	if n := unwritten(s); n != 0 {
		t.Errorf("ledger holds %d counts not in the file after the last commit, want 0", n)
	}
}

// TestLedgerCacheBounded: counts in the file stay cached for the client's
// next call, but no more than maxCachedAllowances of them, and a count
// dropped from the cache is read back right.
func TestLedgerCacheBounded(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	ctx := context.Background()
	const n = maxCachedAllowances + 500
	for i := range n {
		a, err := s.TakeAllowance(ctx, "client-"+strconv.Itoa(i), t0, 5)
		if err != nil || a.Remaining != 4 {
			t.Fatalf("TakeAllowance(client %d) = %+v, %v; want 4 left", i, a, err)
		}
	}
	s.ledger.mu.Lock()
	cached := len(s.ledger.entries)
	s.ledger.mu.Unlock()
	if cached > maxCachedAllowances+1 || cached == 0 {
		t.Errorf("ledger caches %d counts after %d clients, want some and at most %d", cached, n, maxCachedAllowances+1)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		if a, err := s.TakeAllowance(ctx, "client-"+strconv.Itoa(i), t0, 5); err != nil || a.Remaining != 3 {
			t.Errorf("second TakeAllowance(client %d) = %+v, %v; want 3 left", i, a, err)
		}
	}
}

// unwritten counts the ledger's entries whose count is not (yet) the
// file's.
func unwritten(s *Bolt) int {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	n := 0
	for _, e := range s.ledger.entries {
		if !e.clean() {
			n++
		}
	}
	return n
}

// openAt opens the store at path with the clock at t0, closed when the test
// ends.
func openAt(t *testing.T, path string) *Bolt {
	t.Helper()
	s, err := OpenBolt(path, &Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fileCount is the client's count as the file has it, bypassing the ledger.
func fileCount(t *testing.T, s *Bolt, client string, now time.Time) uint64 {
	t.Helper()
	var used uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		used, err = decodeCount(tx.Bucket(bucketAllowance).Get(allowanceKey(client, now)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return used
}
