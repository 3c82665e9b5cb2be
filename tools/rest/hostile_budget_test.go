package rest

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// escapedKey spells the path `["abcdefg"][]` as a JSON string member name,
// in one of 128 ways: the letters whose bit is set in mask as \u escapes.
// Bounds are an object, so many bounds over one array need different
// spellings of its path.
func escapedKey(mask int) string {
	var b strings.Builder
	b.WriteString(`"[\"`)
	for i, c := range "abcdefg" {
		if mask&(1<<i) != 0 {
			fmt.Fprintf(&b, `\\u%04x`, c)
		} else {
			b.WriteRune(c)
		}
	}
	b.WriteString(`\"][]"`)
	return b.String()
}

// integers is a JSON array of 0..n-1.
func integers(n int) string {
	return "[" + testkit.JoinN(n, func(i int) string { return fmt.Sprint(i) }) + "]"
}

// TestHostileStageDeadline checks that the verification deadline reaches
// the checks after the schema: 100 unique rules over 500,000 integers (44 s
// of work before) and 100 bounds over them, with the step limit raised out
// of the way, are answered with the retryable 503 soon after a 1 s
// --verify-timeout: within hostileBound (2 s, 10 s under the race
// detector) of it, which covers reading, decoding and hashing the 3.4 MB
// body before the deadline starts (0.4–1.3 s on a loaded host) and the
// stop itself (the checks look at the deadline every few thousand steps;
// they stop within 10–60 ms of it).
func TestHostileStageDeadline(t *testing.T) {
	const timeout, margin = time.Second, testkit.HostileBound
	output := `{"abcdefg":` + integers(500_000) + `}`
	cases := []struct {
		name string
		body []byte
	}{
		{"100 unique rules over 500,000 integers", testkit.VerifyBody(`{"type":"object"}`, output,
			"rules", "["+testkit.JoinN(100, func(int) string { return `{"type":"unique","field":"abcdefg[]"}` })+"]")},
		{"100 bounds over 500,000 integers", testkit.VerifyBody(`{"type":"object"}`, output,
			"bounds", "{"+testkit.JoinN(100, func(i int) string { return escapedKey(i) + `:{"min":0}` })+"}")},
	}
	f := newHTTPFixture(t, &HTTPOptions{VerifyTimeout: timeout}, nil)
	f.svc.Engine = engine.New(&engine.Options{Schema: schema.Options{MaxSteps: 1 << 40}})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.body) > DefaultMaxBodyBytes {
				t.Fatalf("body of %d bytes, over the limit", len(tc.body))
			}
			start := time.Now()
			rec := testkit.ServeRaw(f.h, http.MethodPost, "/verify/schema", "application/json", tc.body)
			took := time.Since(start)
			o := testkit.Classify(t, rec.Code, rec.Header(), rec.Body.Bytes(), true)
			t.Logf("%d-byte body: status %d in %v", len(tc.body), rec.Code, took)
			if o.Status != http.StatusServiceUnavailable || o.Code != tools.CodeUnavailable || rec.Header().Get("Retry-After") == "" {
				t.Errorf("status %d %s (Retry-After %q), want 503 %s with Retry-After: %.300s",
					o.Status, o.Code, rec.Header().Get("Retry-After"), tools.CodeUnavailable, o.Body)
			}
			if took > timeout+margin {
				t.Errorf("answered after %v, want within %v of the %v deadline", took, margin, timeout)
			}
		})
	}
}

// failingItemsBody is the request for memory: an output that fails
// on every item, `items: {required: [a,b,c]}` over n empty objects.
func failingItemsBody(n int) []byte {
	return testkit.VerifyBody(`{"type":"array","items":{"required":["a","b","c"]}}`, "["+strings.Repeat("{},", n-1)+"{}]")
}

// failureHeapPerByte bounds the heap one request adds at its peak for an
// output that fails everywhere, per byte of its body: the bound SECURITY.md
// ("Memory") states for any request, 64 times its body. 300,000 failures
// used to add some 500 MiB for 1.2 MB (300 to 570 times the body); what is
// left is mostly the decoded output (300,000 empty objects of about 64
// bytes each for 3 bytes of text).
const failureHeapPerByte = 64

// TestHostileFailureHeap measures the peak heap that a request failing on
// each of 300,000 items adds (sampled every millisecond from
// runtime/metrics, after a forced collection), and bounds it at
// failureHeapPerByte times the body: failures past the reported cap are
// counted, not recorded.
func TestHostileFailureHeap(t *testing.T) {
	if testkit.RaceSlowdown > 1 {
		t.Log("heap bound not asserted under the race detector; run without -race")
	}
	f := newHTTPFixture(t, nil, nil)
	body := failingItemsBody(300_000)
	for range 2 { // the second run meets warm caches and pools, as a busy server does
		runtime.GC()
		base := testkit.HeapNow()
		s := startHeapSampler()
		rec := testkit.ServeRaw(f.h, http.MethodPost, "/verify/schema", "application/json", body)
		peak := s.finish()
		added := int64(peak) - int64(base)
		t.Logf("%d-byte body: status %d, peak heap +%.1f MiB (%.1f× the body)",
			len(body), rec.Code, float64(added)/(1<<20), float64(added)/float64(len(body)))
		o := testkit.Classify(t, rec.Code, rec.Header(), rec.Body.Bytes(), false)
		if o.Result != "fail" {
			t.Fatalf("status %d, want a failing verdict: %.300s", rec.Code, rec.Body.Bytes())
		}
		if !strings.Contains(rec.Body.String(), `"errors_total":300000`) {
			t.Errorf("answer does not count 300,000 errors: %.600s", rec.Body.Bytes())
		}
		if bound := int64(failureHeapPerByte * len(body)); testkit.RaceSlowdown == 1 && added > bound {
			t.Errorf("peak heap grew by %.1f MiB, more than %d times the body (%.1f MiB)",
				float64(added)/(1<<20), failureHeapPerByte, float64(bound)/(1<<20))
		}
	}
}

// waitingHeapPerByte bounds the heap a request holds per byte of its body
// once read and decoded, before it is admitted (SECURITY.md, "Memory"): the
// decoded output, at most about 32 times its text for 300,000 empty
// objects.
const waitingHeapPerByte = 32

// TestHostileConcurrentFailures sends eight of the requests failing
// on 300,000 items at once, against a memory budget that admits three of
// them at a time (each is admitted for ExpectedMemory, 64 times its body),
// while a small request is sent three times. It checks the admission
// accounting: never more than the budget admitted, nor more than three big
// verifications with the small one running at once; the small request is
// served every time, promptly; every big one is served in turn; and the
// peak heap stays within the bound SECURITY.md states: the budget, plus
// what each request holds once decoded, before admission.
func TestHostileConcurrentFailures(t *testing.T) {
	const bigs = 8
	big := failingItemsBody(300_000)
	small := testkit.ReadTestdata(t, "invoice-pass.json")
	budget := 3*tools.ExpectedMemory(len(big)) + tools.ExpectedMemory(len(small))
	f := newHTTPFixture(t, nil, nil)
	f.svc.Limiter = tools.NewQueuedLimiter(tools.DefaultMaxConcurrent(), tools.DefaultMaxQueued(tools.DefaultMaxConcurrent()), time.Minute, nil).WithMemory(budget)

	runtime.GC()
	base := testkit.HeapNow()
	heap := startHeapSampler()
	var maxMemory atomic.Int64
	var maxRunning atomic.Int32
	stop := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Go(func() {
		for {
			if m := f.svc.Limiter.MemoryInUse(); m > maxMemory.Load() {
				maxMemory.Store(m)
			}
			if n := int32(f.svc.Limiter.InUse()); n > maxRunning.Load() {
				maxRunning.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	})
	statuses := make([]int, bigs)
	var wg sync.WaitGroup
	for i := range bigs {
		wg.Go(func() {
			statuses[i] = testkit.ServeRaw(f.h, http.MethodPost, "/verify/schema", "application/json", big).Code
		})
	}
	for f.svc.Limiter.MemoryInUse() == 0 { // the first big verification is admitted
		time.Sleep(time.Millisecond)
	}
	for i := range 3 {
		start := time.Now()
		rec := testkit.ServeRaw(f.h, http.MethodPost, "/verify/schema", "application/json", small)
		took := time.Since(start)
		if rec.Code != http.StatusOK || took > testkit.HostileBound {
			t.Errorf("small request %d during the burst: status %d after %v, want 200 within %v: %.300s",
				i, rec.Code, took, testkit.HostileBound, rec.Body.Bytes())
		}
	}
	wg.Wait()
	close(stop)
	sampling.Wait()
	added := int64(heap.finish()) - int64(base)
	bound := budget + int64(bigs*waitingHeapPerByte*len(big))
	t.Logf("%d × %d bytes at once, budget %.1f MiB (%.1f MiB each): statuses %v; at most %.1f MiB admitted, %d running; peak heap +%.1f MiB (bound %.1f MiB)",
		bigs, len(big), float64(budget)/(1<<20), float64(tools.ExpectedMemory(len(big)))/(1<<20), statuses,
		float64(maxMemory.Load())/(1<<20), maxRunning.Load(), float64(added)/(1<<20), float64(bound)/(1<<20))
	for i, st := range statuses {
		if st != http.StatusOK {
			t.Errorf("big request %d: status %d, want 200 (served in turn)", i, st)
		}
	}
	if maxMemory.Load() > budget {
		t.Errorf("%d bytes admitted at once, over the budget of %d", maxMemory.Load(), budget)
	}
	if maxRunning.Load() > 4 {
		t.Errorf("%d verifications running at once, want at most 3 big ones and the small one", maxRunning.Load())
	}
	if testkit.RaceSlowdown == 1 && added > bound {
		t.Errorf("peak heap grew by %.1f MiB, more than the bound of %.1f MiB", float64(added)/(1<<20), float64(bound)/(1<<20))
	}
}
