package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/engine/schema"
)

// patternRequest is a verification request whose schema has n distinct
// patterns of about 9·count units each (ecmaregex.Program.Size), variant
// making it distinct from other requests.
func patternRequest(variant, n, count int) []byte {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"pattern":"^[a-z]{1,%d}[0-9]{1,%d}x{%d}y{%d}$"}`, i, count, count, i+1, variant+1)
	}
	return fmt.Appendf(nil, `{"task_id":"t","expected_schema":{"type":"object","properties":{%s}},"submitted_output":{"p0":"ab12x"}}`,
		strings.Join(props, ","))
}

// heapInUse is the heap in use after collecting garbage.
func heapInUse() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC() // and what the first collection's finalizers and pools let go
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestSchemaCacheBoundedByHeap sends ten distinct requests with heavy
// patterns and checks that the compiled-schema cache holds at most its
// 32 MiB: by its accounting (each entry's Size, compiled patterns
// included) and by the heap that stays in use after a collection. The
// heavy schemas of issue #36 (a hundred patterns of thousands of
// instructions each) are refused and cost nothing after; with unbounded
// compiling they stayed in the cache, about 10 MB each. Schemas within the
// pattern limits are cached until the cache's accounted size reaches its
// budget, and the heap they hold stays within their accounted size.
func TestSchemaCacheBoundedByHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory distorts heap figures")
	}
	for _, tt := range []struct {
		name      string
		n, count  int
		refused   bool
		minCached int
	}{
		{"over the patterns' limit", 100, 450, true, 0},
		{"within the limits", 18, 450, false, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := New(nil)
			// the meta-schemas compile once, on first use
			if _, err := v.Check(mustDecodeRequest(t, v, []byte(`{"task_id":"t","expected_schema":{},"submitted_output":1}`)), ""); err != nil {
				t.Fatal(err)
			}
			base := heapInUse()
			for i := range 10 {
				req := mustDecodeRequest(t, v, patternRequest(i, tt.n, tt.count))
				_, err := v.CheckContext(context.Background(), req, fmt.Sprint("schema-", i))
				var invalid *InvalidRequestError
				if refused := errors.As(err, &invalid); refused != tt.refused || (!refused && err != nil) {
					t.Fatalf("request %d: %v, want refused %v", i, err, tt.refused)
				}
				if tt.refused && !strings.Contains(invalid.Fields[0].Problem, "too large") {
					t.Fatalf("request %d: %v, want the too-large refusal", i, err)
				}
			}
			held := heapInUse() - base
			accounted := v.CachedSchemaBytes()
			t.Logf("%d schemas cached, %d bytes accounted, %d bytes held", v.CachedSchemas(), accounted, held)
			if accounted > SchemaCacheBudget {
				t.Errorf("the cache accounts %d bytes, over its budget of %d", accounted, SchemaCacheBudget)
			}
			const slack = 1 << 20 // what else the heap holds after a test's requests
			if held > SchemaCacheBudget+slack {
				t.Errorf("the cache holds %d MiB of heap, over its budget of %d MiB", held>>20, SchemaCacheBudget>>20)
			}
			if held > accounted+slack || accounted > 0 && held < accounted/8 {
				t.Errorf("the cache holds %d bytes of heap, not within its accounted %d bytes and an eighth of it", held, accounted)
			}
			if n := v.CachedSchemas(); n < tt.minCached || n == 10 && !tt.refused {
				t.Errorf("%d schemas cached, want at least %d and some evicted", n, tt.minCached)
			}
			runtime.KeepAlive(v)
		})
	}
}

func mustDecodeRequest(t *testing.T, v *Verifier, body []byte) *Request {
	t.Helper()
	req, err := v.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestHeavyPatternRequestWithinDeadline sends the request of issue #36 —
// a thousand patterns of thousands of instructions, as pattern and as
// patternProperties keys — under a one-second deadline, and checks that it
// is refused as too large within the deadline, having allocated a bounded
// heap. Compiled without bounds it allocated over 250 MB and ran for
// seconds past its deadline.
func TestHeavyPatternRequestWithinDeadline(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector distorts allocation and time")
	}
	same := make([]string, 1000)
	distinct := make([]string, 1000)
	for i := range same {
		same[i] = fmt.Sprintf(`"p%d":{"pattern":"^[a-z]{1,1000}[0-9]{1,1000}$"}`, i)
		distinct[i] = fmt.Sprintf(`"p%d":{"patternProperties":{"^[a-z]{1,400}[0-9]{1,400}x{%d}$":true}}`, i, i+1)
	}
	for _, tt := range []struct{ name, props string }{
		{"the same pattern a thousand times", strings.Join(same, ",")},
		{"a thousand distinct patternProperties", strings.Join(distinct, ",")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := New(nil)
			req := mustDecodeRequest(t, v, []byte(`{"task_id":"t","expected_schema":{"type":"object","properties":{`+tt.props+`}},"submitted_output":{}}`))
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := v.CheckContext(ctx, req, "heavy")
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			var invalid *InvalidRequestError
			if !errors.As(err, &invalid) || !strings.Contains(invalid.Fields[0].Problem, "too large") {
				t.Errorf("CheckContext = %v, want the too-large refusal", err)
			}
			if took > time.Second {
				t.Errorf("took %v under a one-second deadline", took)
			}
			const maxAlloc = 64 << 20
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxAlloc {
				t.Errorf("allocated %d MiB, want at most %d", alloc>>20, maxAlloc>>20)
			}
			if v.CachedSchemas() != 0 {
				t.Error("a refused schema was cached")
			}
		})
	}
}

// TestCompileChargedEveryTime checks that a request spends its patterns'
// compile steps whether or not its schema was cached, so that its verdict
// does not depend on the cache: with a step limit below them, it is
// refused both times.
func TestCompileChargedEveryTime(t *testing.T) {
	body := patternRequest(0, 10, 200)
	roomy := New(nil)
	req := mustDecodeRequest(t, roomy, body)
	compiled, err := roomy.CompileRequest(req, "")
	if err != nil {
		t.Fatal(err)
	}
	v := New(&Options{Schema: schema.Options{MaxSteps: compiled.CompileSteps() - 1}})
	for i := range 2 {
		req := mustDecodeRequest(t, v, body)
		_, err := v.CheckContext(context.Background(), req, "key")
		var invalid *InvalidRequestError
		if !errors.As(err, &invalid) || invalid.Fields[0].Field != "expected_schema" {
			t.Errorf("call %d: %v, want the step limit's 422 on expected_schema", i, err)
		}
		if i == 0 {
			if _, err := v.CompileRequest(req, "key"); err != nil { // now cached
				t.Fatal(err)
			}
		}
	}
}
