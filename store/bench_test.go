package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkPutVerdict measures durable (fsynced) verdict writes with 1, 8
// and 64 concurrent writers, for each commit strategy: group-commit (what
// PutVerdict does), tx-per-write (one transaction and fsync per verdict) and
// bbolt-batch (bbolt's DB.Batch with its 10ms timer); and group-commit with
// a free call per verdict, as the server serves one (ReserveAllowance before
// the work, PutVerdict, then the hold's Commit), or as it did before the
// free call rode on the verdict's commit (TakeAllowance, which commits at
// once, then PutVerdict). One op is one verdict. Group commits report how
// many commits an op costs (commits/op). cpu-ns/op is the process's CPU
// time per op (the disk's waits are not in it).
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
				start, cpu, commits := time.Now(), cpuNow(), s.ledger.nextSnap
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
				b.ReportMetric(float64(cpuNow()-cpu)/float64(b.N), "cpu-ns/op")
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
// 100,000 verdicts, and receipt reads: the same verdict again and again,
// and a different one each time.
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
	next := 0
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
		{"receipt/spread-ids", func() error { // a different verdict each time, all over the file
			next = (next + 7919) % n
			_, err := s.Receipt(ctx, vs[next].VerificationID)
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

// BenchmarkPutVerdictServerShape stores verdicts as the server does: random
// UUIDv4 verification ids, verified_at read from the clock just before the
// call (so concurrent writers' times arrive slightly out of order), a
// receipt of the server's size (records of about 1.8 KB), 64 writers, group
// commits with fsync; for one agent (the load test's) and for 1,000. One
// op is one verdict; run it with a fixed count (-benchtime 20000x) to
// compare layouts. Besides writes/s and CPU time per verdict (cpu-ns/op) it
// reports the file's size per verdict (file-B/op), each bucket's allocated
// leaf bytes per verdict (<bucket>-B/op) and, on Linux, the bytes of the
// file resident in this process's mapping per verdict (mapped-B/op): the
// pages bbolt has read and their neighbours, which the server's RssFile
// counts.
func BenchmarkPutVerdictServerShape(b *testing.B) {
	pad := strings.Repeat("x", 1000)
	for _, agents := range []int{1, 1000} {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			s := openTemp(b, nil)
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(uint64(agents), 9))
			ids := make([]string, b.N)
			for i := range ids {
				hi, lo := rng.Uint64(), rng.Uint64()
				ids[i] = fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", hi>>32, hi>>16&0xffff, hi&0xfff,
					lo>>48&0x3fff|0x8000, lo&0xffffffffffff)
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start, cpu := time.Now(), cpuNow()
			for range 64 {
				wg.Go(func() {
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						v := testVerdict(ids[i], fmt.Sprintf("seller-%d", i%int64(agents)), i%5 != 0, time.Now())
						v.Receipt = json.RawMessage(fmt.Sprintf(`{"verification_id":%q,"signature":%q}`, ids[i], pad))
						if err := s.PutVerdict(ctx, v); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
			b.ReportMetric(float64(cpuNow()-cpu)/float64(b.N), "cpu-ns/op")
			b.StopTimer()
			if rss, ok := mappedResident(s.Path()); ok { // before Stats reads every page
				b.ReportMetric(float64(rss)/float64(b.N), "mapped-B/op")
			}
			err := s.db.View(func(tx *bolt.Tx) error {
				b.ReportMetric(float64(tx.Size())/float64(b.N), "file-B/op")
				return tx.ForEach(func(name []byte, bk *bolt.Bucket) error {
					if st := bk.Stats(); st.LeafAlloc > 4096 {
						b.ReportMetric(float64(st.LeafAlloc)/float64(b.N), string(name)+"-B/op")
					}
					return nil
				})
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// mappedResident returns how many bytes of the file at path are resident in
// this process's mappings of it, from /proc/self/smaps; false where there is
// no such file (not Linux).
func mappedResident(path string) (int64, bool) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var total int64
	inFile := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			inFile = len(fields) >= 6 && fields[5] == path // a mapping's first line
		case inFile && len(fields) == 3 && fields[0] == "Rss:":
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, false
			}
			total += kb << 10
		}
	}
	return total, sc.Err() == nil
}

// cpuNow returns the CPU time this process has used (user and system).
func cpuNow() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkLogCost is the transparency log's share of a verdict write, in
// process: entry is LogEntry (RFC 8785 form and SHA-256) of a compact
// receipt of the server's shape (testdata/receipt-compact.json, from the
// invoice golden); log-on and log-off store verdicts carrying it as the
// server does (random UUIDv4 ids, verified_at from the clock, 32 writers,
// group commits with fsync), with the log and with Options.NoLog. One op is
// one verdict; cpu-ns/op is the process's CPU time per op, pages/op the
// pages bbolt wrote per op (BENCHMARKS.md, "Transparency log").
func BenchmarkLogCost(b *testing.B) {
	receipt, err := os.ReadFile(filepath.Join("testdata", "receipt-compact.json"))
	if err != nil {
		b.Fatal(err)
	}
	receipt = bytes.TrimSpace(receipt)
	b.Run("entry", func(b *testing.B) {
		cpu := cpuNow()
		for b.Loop() {
			if _, err := LogEntry(receipt); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuNow()-cpu)/float64(b.N), "cpu-ns/op")
	})
	for _, c := range []struct {
		name  string
		noLog bool
	}{{"log-on", false}, {"log-off", true}} {
		b.Run(c.name, func(b *testing.B) {
			s := openTemp(b, &Options{NoLog: c.noLog})
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(1, 2))
			ids := make([]string, b.N)
			for i := range ids {
				hi, lo := rng.Uint64(), rng.Uint64()
				ids[i] = fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", hi>>32, hi>>16&0xffff, hi&0xfff,
					lo>>48&0x3fff|0x8000, lo&0xffffffffffff)
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			before := s.db.Stats()
			b.ResetTimer()
			cpu := cpuNow()
			for range 32 {
				wg.Go(func() {
					for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
						v := testVerdict(ids[i], "seller-7", true, time.Now())
						v.Receipt = receipt
						if err := s.PutVerdict(ctx, v); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(cpuNow()-cpu)/float64(b.N), "cpu-ns/op")
			after := s.db.Stats()
			b.ReportMetric(float64(after.TxStats.GetWrite()-before.TxStats.GetWrite())/float64(b.N), "pages/op")
		})
	}
}
