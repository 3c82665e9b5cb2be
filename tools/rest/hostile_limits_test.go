package rest

import (
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// TestHostileDeadline checks that the verification deadline reaches the
// schema evaluation: with the step limit raised out of the way, a schema of
// 2^26 applications is stopped at the deadline and answered with the
// retryable 503, long before it would finish.
func TestHostileDeadline(t *testing.T) {
	f := newHTTPFixture(t, &HTTPOptions{VerifyTimeout: 200 * time.Millisecond}, nil)
	f.svc.Engine = engine.New(&engine.Options{Schema: schema.Options{MaxSteps: 1 << 40}})
	body := testkit.VerifyBody(testkit.FanOutSchema(26, `{"type":"integer"}`), `1`)
	start := time.Now()
	rec := testkit.ServeRaw(f.h, http.MethodPost, "/verify/schema", "application/json", body)
	took := time.Since(start)
	o := testkit.Classify(t, rec.Code, rec.Header(), rec.Body.Bytes(), true)
	if o.Status != http.StatusServiceUnavailable || o.Code != tools.CodeUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("status %d %s (Retry-After %q), want 503 %s with Retry-After: %s",
			o.Status, o.Code, rec.Header().Get("Retry-After"), tools.CodeUnavailable, o.Body)
	}
	if took > testkit.HostileBound {
		t.Errorf("answered after %v, want soon after the 200ms deadline", took)
	}
}

// heapSampler records the peak of the heap's live and unswept objects
// while it runs, from runtime/metrics (which does not stop the world).
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done sync.WaitGroup
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.done.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if n := testkit.HeapNow(); n > h.peak.Load() {
				h.peak.Store(n)
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	})
	return h
}

func (h *heapSampler) finish() uint64 {
	close(h.stop)
	h.done.Wait()
	return h.peak.Load()
}

// maxHeapPerRequest bounds the heap one request may add at its peak, for
// bodies up to the 4 MiB limit: 64 times the limit.
const maxHeapPerRequest = 64 * DefaultMaxBodyBytes

// TestHostilePeakHeap measures, for each of the worst inputs above, the
// peak heap a request adds over the heap before it (sampled every
// millisecond) and the bytes it allocates in all, and asserts the bound.
// The measurements are logged (go test -v) and quoted in SECURITY.md.
func TestHostilePeakHeap(t *testing.T) {
	if testkit.RaceSlowdown > 1 {
		// The race detector's shadow memory is not the heap this bounds,
		// and its slowdown makes the sampling miss nothing a plain run
		// would catch; the bound is asserted without it.
		t.Log("heap bound not asserted under the race detector; run without -race")
	}
	worst := map[string]bool{
		"string just under the hard limit": true, "string of escapes just under the hard limit": true,
		"many small keys": true, "many small keys, described and strict": true, "many empty arrays": true,
		"many small numbers": true, "many subnormal numbers": true, "100k-deep array": true,
		"50k-entry enum of strings over 200k items": true, "50k-entry enum of objects over 20k items": true,
		"uniqueItems over 200k equal items": true, "uniqueItems over 100k distinct numbers": true,
		"catastrophic (a+)+$ on 3 MiB": true, "every format but regex on a 3 MiB string": true,
		"pattern applied 2^19 times to a 3 MiB string": true, "10 MB string over the hard limit": true,
	}
	f := newHTTPFixture(t, nil, nil)
	found := 0
	for _, tc := range append(hostileDocuments(), hostileSchemas()...) {
		if !worst[tc.name] {
			continue
		}
		found++
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body()
			runtime.GC()
			base := testkit.HeapNow()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			s := startHeapSampler()
			rec := testkit.ServeRaw(f.h, http.MethodPost, "/verify/schema", "application/json", body)
			peak := s.finish()
			runtime.ReadMemStats(&after)
			added := int64(peak) - int64(base)
			t.Logf("%d-byte body: status %d, peak heap +%.1f MiB (%.1f× the body), %.1f MiB allocated",
				len(body), rec.Code, float64(added)/(1<<20), float64(added)/float64(len(body)),
				float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
			if rec.Code >= 500 {
				t.Errorf("status %d: %.300s", rec.Code, rec.Body.Bytes())
			}
			if testkit.RaceSlowdown == 1 && added > maxHeapPerRequest {
				t.Errorf("peak heap grew by %d bytes, more than the bound %d", added, maxHeapPerRequest)
			}
		})
	}
	if found != len(worst) {
		t.Errorf("found %d of the %d worst cases by name; a case was renamed", found, len(worst))
	}
}

// TestHostileConcurrentHeap sends the worst body for memory from many
// clients at once through a real listener with the default concurrency
// limit, and bounds the peak heap of the whole burst: what the limit and
// the body limit promise together.
func TestHostileConcurrentHeap(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	f.svc.Limiter = tools.NewLimiter(tools.DefaultMaxConcurrent())
	body := testkit.VerifyBody(`{"type":"object"}`, "{"+testkit.JoinN((1<<20)/12, hexKey)+"}")
	const clients = 16
	runtime.GC()
	base := testkit.HeapNow()
	s := startHeapSampler()
	statuses := postVerifications(t, f, body, clients)
	added := int64(s.finish()) - int64(base)
	t.Logf("%d clients × %d bytes, limit %d: statuses %v, peak heap +%.1f MiB", clients, len(body), tools.DefaultMaxConcurrent(), statuses, float64(added)/(1<<20))
	for i, st := range statuses {
		if st != http.StatusOK && st != http.StatusServiceUnavailable {
			t.Errorf("client %d: status %d, want 200 or 503", i, st)
		}
	}
	if bound := int64(clients) * maxHeapPerRequest; testkit.RaceSlowdown == 1 && added > bound {
		t.Errorf("peak heap grew by %d bytes, more than %d", added, bound)
	}
}

// hexKey is a six-digit member of an object of many small keys.
func hexKey(i int) string {
	const digits = "0123456789abcdef"
	b := []byte(`"000000":0`)
	for j := 6; j >= 1 && i > 0; j-- {
		b[j] = digits[i%16]
		i /= 16
	}
	return string(b)
}
