package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPutVerdict measures durable (fsynced) verdict writes with 1, 8
// and 64 concurrent writers, for each commit strategy: group-commit (what
// PutVerdict does), tx-per-write (one transaction and fsync per verdict) and
// bbolt-batch (bbolt's DB.Batch with its 10ms timer). One op is one verdict.
func BenchmarkPutVerdict(b *testing.B) {
	for _, mode := range writeModes {
		for _, writers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", mode.name, writers), func(b *testing.B) {
				s := openTemp(b, &Options{writeMode: mode.mode})
				agents := []string{"seller-1", "seller-2", "seller-3", "seller-4"}
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for range writers {
					wg.Go(func() {
						for {
							i := next.Add(1)
							if i > int64(b.N) {
								return
							}
							v := testVerdict(fmt.Sprintf("v-%09d", i), agents[i%4], i%5 != 0, t0.Add(time.Duration(i)*time.Millisecond))
							if err := s.PutVerdict(context.Background(), v); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
			})
		}
	}
}

// BenchmarkRead100k measures reputation and score reads of an agent with
// 100,000 verdicts.
func BenchmarkRead100k(b *testing.B) {
	s := openTemp(b, &Options{NoSync: true})
	const n = 100_000
	vs := bulkHistory("busy", n)
	putAll(b, s, vs)
	// Other agents around it, so its keys are not the whole bucket.
	putAll(b, s, bulkHistory("busy-neighbour", 1000))
	ctx := context.Background()
	now := vs[0].VerifiedAt.Add(time.Hour)
	// A cursor half-way through the history.
	midCursor := base64.RawURLEncoding.EncodeToString(timeKey(vs[n/2].VerifiedAt.UnixNano(), vs[n/2].VerificationID))
	for _, bb := range []struct {
		name string
		read func() error
	}{
		{"reputation/first-page-20", func() error {
			_, err := s.Reputation(ctx, "busy", Page{})
			return err
		}},
		{"reputation/page-100-mid-history", func() error {
			_, err := s.Reputation(ctx, "busy", Page{Limit: 100, Cursor: midCursor})
			return err
		}},
		{"score", func() error {
			_, err := s.Score(ctx, "busy", now)
			return err
		}},
		{"receipt", func() error {
			_, err := s.Receipt(ctx, vs[n/2].VerificationID)
			return err
		}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if err := bb.read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
