package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestGroupCommitFailuresStayTheirOwn(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	errBoom := errors.New("boom")
	key := func(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }
	var wg sync.WaitGroup
	errs := make([]error, 200)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.group.do(func(tx *bolt.Tx) error {
				switch i % 10 {
				case 3:
					return errBoom
				case 7:
					panic("write panicked")
				}
				return tx.Bucket(bucketMeta).Put(key(i), []byte("v"))
			})
		})
	}
	wg.Wait()
	err := s.db.View(func(tx *bolt.Tx) error {
		for i, err := range errs {
			stored := tx.Bucket(bucketMeta).Get(key(i)) != nil
			switch i % 10 {
			case 3:
				if !errors.Is(err, errBoom) || stored {
					t.Errorf("write %d: error = %v, stored %v; want boom, not stored", i, err, stored)
				}
			case 7:
				if !errors.Is(err, ErrCorrupt) || stored {
					t.Errorf("write %d: error = %v, stored %v; want the panic as ErrCorrupt, not stored", i, err, stored)
				}
			default:
				if err != nil || !stored {
					t.Errorf("write %d: error = %v, stored %v; want nil, stored", i, err, stored)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentSameVerificationID(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	ctx := context.Background()
	var ok, dup atomic.Int64
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			// Half send one content, half another: one content wins, all its
			// senders succeed (idempotent), the others get ErrDuplicate.
			err := s.PutVerdict(ctx, testVerdict("same", "seller", i%2 == 0, t0))
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrDuplicate):
				dup.Add(1)
			default:
				t.Errorf("PutVerdict() error = %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 32 || dup.Load() != 32 {
		t.Errorf("succeeded %d, duplicates %d; want 32, 32", ok.Load(), dup.Load())
	}
	rep, err := s.Reputation(ctx, "seller", Page{})
	if err != nil || rep.Total != 1 {
		t.Errorf("Reputation() = %+v, %v; want one verdict", rep, err)
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify() = %v", err)
	}
}

func TestWriteAfterClose(t *testing.T) {
	s := openTemp(t, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.PutVerdict(context.Background(), testVerdict("late", "seller", true, t0)); err == nil {
		t.Errorf("PutVerdict() after Close = nil, want an error")
	}
}
