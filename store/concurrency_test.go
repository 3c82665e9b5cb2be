package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConcurrentWritersAndReaders runs writers and readers of every kind at
// once (meant for -race): readers must only ever see consistent, growing
// records, and the end state must match what was written.
func TestConcurrentWritersAndReaders(t *testing.T) {
	const (
		writers   = 16
		perWriter = 60
		readers   = 8
	)
	s := openTemp(t, &Options{NoSync: true})
	ctx := context.Background()
	agents := []string{"seller-1", "seller-2", "seller-3", "test-x"}
	var (
		done    atomic.Bool
		written sync.Map // verification id → struct{}
		wgW     sync.WaitGroup
		wgR     sync.WaitGroup
		passes  [3]atomic.Int64
	)
	for w := range writers {
		wgW.Go(func() {
			for i := range perWriter {
				id := fmt.Sprintf("w%02d-%03d", w, i)
				a := (w + i) % len(agents)
				pass := (w*i)%4 != 0
				if err := s.PutVerdict(ctx, testVerdict(id, agents[a], pass, t0.Add(time.Duration(i)*time.Second))); err != nil {
					t.Errorf("PutVerdict(%s) error = %v", id, err)
					return
				}
				written.Store(id, struct{}{})
				if pass && a < 3 {
					passes[a].Add(1)
				}
				if _, err := s.TakeAllowance(ctx, fmt.Sprintf("client-%d", w%4), t0, perWriter); err != nil {
					t.Errorf("TakeAllowance() error = %v", err)
				}
				if _, _, err := s.UsePayment(ctx, fmt.Sprintf("pay-%d", i), t0.Add(time.Hour), PaymentUse{}); err != nil {
					t.Errorf("UsePayment() error = %v", err)
				}
			}
		})
	}
	for r := range readers {
		wgR.Go(func() {
			seen := map[string]int{}
			for n := 0; !done.Load(); n++ {
				agent := agents[(r+n)%len(agents)]
				rep, err := s.Reputation(ctx, agent, Page{Limit: 5})
				if err != nil {
					t.Errorf("Reputation() error = %v", err)
					return
				}
				if rep.Passed+rep.Failed != rep.Total || rep.Total < seen[agent] || len(rep.Recent) > 5 ||
					len(rep.Recent) > rep.Total {
					t.Errorf("Reputation(%s) inconsistent: %+v after total %d", agent, rep, seen[agent])
					return
				}
				seen[agent] = rep.Total
				sc, err := s.Score(ctx, agent, t0.Add(time.Hour))
				if err != nil || sc.Score < 0 || sc.Score > 100 || sc.Interval[0] > sc.Interval[1] {
					t.Errorf("Score(%s) = %+v, %v", agent, sc, err)
					return
				}
				if _, err := s.PeekAllowance(ctx, "client-0", t0, perWriter); err != nil {
					t.Errorf("PeekAllowance() error = %v", err)
				}
				written.Range(func(k, _ any) bool {
					if _, err := s.Receipt(ctx, k.(string)); err != nil {
						t.Errorf("Receipt(%s) of a written verdict: %v", k, err)
					}
					return false // one per round
				})
			}
		})
	}
	wgW.Wait()
	done.Store(true)
	wgR.Wait()

	total := 0
	for a, agent := range agents[:3] {
		rep, err := s.Reputation(ctx, agent, Page{})
		if err != nil {
			t.Fatal(err)
		}
		total += rep.Total
		if int64(rep.Passed) != passes[a].Load() {
			t.Errorf("Reputation(%s).Passed = %d, want %d", agent, rep.Passed, passes[a].Load())
		}
	}
	if want := writers * perWriter * 3 / 4; total != want {
		t.Errorf("counted verdicts = %d, want %d (test agent excluded)", total, want)
	}
	for c := range 4 {
		a, err := s.PeekAllowance(ctx, fmt.Sprintf("client-%d", c), t0, perWriter)
		if err != nil || a.Granted {
			t.Errorf("PeekAllowance(client-%d) = %+v, %v, want used up", c, a, err)
		}
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify() = %v", err)
	}
}
