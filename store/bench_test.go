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
// bbolt-batch (bbolt's DB.Batch with its 10ms timer); and group-commit with
// a free call per verdict, as the server serves one (ReserveAllowance before
// the work, PutVerdict, then the hold's Commit), or as it did before the
// free call rode on the verdict's commit (TakeAllowance, which commits at
// once, then PutVerdict). One op is one verdict. Group commits report how
// many commits an op costs (commits/op).
func BenchmarkPutVerdict(b *testing.B) {
	type putCase struct {
		name string
		mode writeMode
		free bool // a free call held before each verdict, committed after it
		take bool // a free call taken (committed) before each verdict
	}
	var cases []putCase
	for _, mode := range writeModes {
		cases = append(cases, putCase{name: mode.name, mode: mode.mode})
	}
	cases = append(cases, putCase{name: "group-commit+free-call", mode: writeGroupCommit, free: true},
		putCase{name: "group-commit+take-allowance", mode: writeGroupCommit, take: true})
	for _, tt := range cases {
		for _, writers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", tt.name, writers), func(b *testing.B) {
				s := openTemp(b, &Options{writeMode: tt.mode})
				ctx := context.Background()
				agents := []string{"seller-1", "seller-2", "seller-3", "seller-4"}
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				start, commits := time.Now(), s.ledger.nextSnap
				for range writers {
					wg.Go(func() {
						for {
							i := next.Add(1)
							if i > int64(b.N) {
								return
							}
							if tt.take {
								if a, err := s.TakeAllowance(ctx, "client-"+agents[i%4], t0, 1<<30); err != nil || !a.Granted {
									b.Errorf("TakeAllowance() = %+v, %v", a, err)
									return
								}
							}
							var hold AllowanceHold
							if tt.free {
								var err error
								if _, hold, err = s.ReserveAllowance(ctx, "client-"+agents[i%4], t0, 1<<30); err != nil || hold == nil {
									b.Errorf("ReserveAllowance() = %v, %v", hold, err)
									return
								}
							}
							v := testVerdict(fmt.Sprintf("v-%09d", i), agents[i%4], i%5 != 0, t0.Add(time.Duration(i)*time.Millisecond))
							if err := s.PutVerdict(ctx, v); err != nil {
								b.Error(err)
								return
							}
							if hold != nil {
								if err := hold.Commit(); err != nil {
									b.Error(err)
									return
								}
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
				if tt.mode == writeGroupCommit {
					s.ledger.mu.Lock()
					b.ReportMetric(float64(s.ledger.nextSnap-commits)/float64(b.N), "commits/op")
					s.ledger.mu.Unlock()
				}
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
