package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// The growth benchmarks (issue #9) time Service.Verify, the path of
// BenchmarkVerify, while one dimension of the request grows: the document,
// the number of rules, the number of schema checks. Every request passes
// every check. Besides ns/op, cpu-ns/op, B/op and allocs/op each
// sub-benchmark reports the cost per unit of its dimension (ns/KB, ns/rule,
// ns/check: wall time over the unit count) and peak-B, the most heap one
// verification holds at once (peakHeap), measured once per sub-benchmark
// outside the timed loop. scripts/growth.sh runs them and draws the charts
// of BENCHMARKS.md.

// growthNoPeak leaves out the peak-B measurement: for instruction counts
// (valgrind --tool=callgrind), which the busy loop of its sampling
// goroutine would swell by however long the scheduler let it run.
var growthNoPeak = flag.Bool("growth.nopeak", false, "growth benchmarks: do not measure peak-B")

// growthCase is one request of a growth family.
type growthCase struct {
	name  string  // the sub-benchmark's name, e.g. "bytes=65536"
	body  []byte  // the request
	units float64 // its size in the family's unit: KB, rules or schema checks
}

// peakGCPercent is the GOGC setting under which heapPeakOnce runs its
// verification: the collector then runs whenever the heap has grown by 2 %
// over what it last found live, so the heap in use stays close to the live
// heap.
const peakGCPercent = 2

// BenchmarkGrowthDocument verifies the invoice request of
// testdata/invoice-pass.json (its schema, bounds and rules) with the
// document grown to 4 KB … 1 MB by generated line items, each request
// padded to exactly that many bytes; the first case is the smallest such
// request, one line item. Sub-benchmarks are named by the request's size in
// bytes.
func BenchmarkGrowthDocument(b *testing.B) {
	runGrowth(b, documentGrowth(b), "KB")
}

// BenchmarkGrowthRules verifies a fixed request, the invoice with 50 line
// items (about 7 KB), with 1 … 100 rules (the request limit,
// engine.DefaultMaxRules), the five rule types in turn, each over the line
// items.
func BenchmarkGrowthRules(b *testing.B) {
	runGrowth(b, rulesGrowth(b), "rule")
}

// BenchmarkGrowthSchemaChecks verifies a request whose schema has N
// properties, alternately an integer with type and minimum and a string
// with type and pattern, against a document that has them all: 2N+1 schema
// checks, as the answer's schema_compliance.total reports (the checks
// metric).
func BenchmarkGrowthSchemaChecks(b *testing.B) {
	runGrowth(b, schemaGrowth(b), "check")
}

// runGrowth runs one sub-benchmark per case.
func runGrowth(b *testing.B, cases []growthCase, unit string) {
	svc := testkit.NewTestService(b, false)
	for _, c := range cases {
		checks, peak := -1, -1.0
		b.Run(c.name, func(b *testing.B) {
			// Once per sub-benchmark, not for each -count, and only for
			// those -bench selects: the first verification (which also
			// compiles the schema) and the peak. Metrics are reported after
			// the loop, which deletes those reported before it.
			if checks < 0 {
				res, err := svc.Verify(context.Background(), c.body)
				if err != nil || res.Outcome.Result() != "pass" {
					b.Fatalf("%s does not pass: %v", c.name, err)
				}
				checks = res.Outcome.Schema.Total
				if unit == "check" && float64(checks) != c.units {
					b.Fatalf("%s: the answer counts %d schema checks", c.name, checks)
				}
			}
			if peak < 0 && !*growthNoPeak {
				peak = peakHeap(b, svc, c.body)
			}
			b.ReportAllocs()
			cpu := testkit.StartCPU()
			for b.Loop() {
				if _, err := svc.Verify(context.Background(), c.body); err != nil {
					b.Fatal(err)
				}
			}
			cpu.Report(b)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/c.units, "ns/"+unit)
			if peak >= 0 {
				b.ReportMetric(peak, "peak-B")
			}
			if unit == "check" {
				b.ReportMetric(float64(checks), "checks")
			}
		})
	}
}

// peakHeap returns the most heap one verification of body holds at once,
// in bytes above the heap before it: the least of peakRuns measurements by
// heapPeakOnce, since every error of one (garbage not yet freed, a
// collection that came late) makes it larger.
func peakHeap(tb testing.TB, svc *tools.Service, body []byte) float64 {
	tb.Helper()
	least := math.Inf(1)
	for range peakRuns {
		least = min(least, heapPeakOnce(tb, svc, body))
	}
	return least
}

// peakRuns is how many times peakHeap measures.
const peakRuns = 3

// heapPeakOnce runs one verification of body with GOGC at peakGCPercent
// while a second goroutine samples runtime.MemStats.HeapAlloc (the bytes
// of heap objects not yet freed, exact at each sample) back to back, and
// returns the largest sample above HeapAlloc after full collections just
// before. The low GOGC makes the collector free garbage whenever the heap
// has grown by 2 % of what is live, so on a verification that allocates
// many times that slack the figure is its peak live heap plus at most the
// slack; one that allocates less is never collected and comes out at about
// everything it allocates. Each sample stops the world for a moment, which
// slows the verification but not what it holds.
func heapPeakOnce(tb testing.TB, svc *tools.Service, body []byte) float64 {
	tb.Helper()
	read := func() uint64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	// Two collections: the first moves sync.Pool contents to the victim
	// cache, the second frees them, so buffers the verification takes from
	// a pool count as its own, and it frees nothing the base counts.
	runtime.GC()
	runtime.GC()
	base := read()
	defer debug.SetGCPercent(debug.SetGCPercent(peakGCPercent))
	done, result := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		for {
			peak = max(peak, read())
			select {
			case <-done:
				result <- max(peak, read())
				return
			default:
			}
		}
	}()
	res, err := svc.Verify(context.Background(), body)
	close(done)
	peak := <-result
	runtime.KeepAlive(res)
	if err != nil {
		tb.Fatal(err)
	}
	if peak < base {
		return 0
	}
	return float64(peak - base)
}

// documentGrowth returns the invoice request at about 1 KB (one line item,
// the smallest request) and at exactly 4 KB … 1 MB.
func documentGrowth(tb testing.TB) []growthCase {
	tb.Helper()
	invoice := testkit.ReadTestdata(tb, "invoice-pass.json")
	var cases []growthCase
	for _, size := range []int{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		body := invoiceOfSize(tb, invoice, size)
		cases = append(cases, growthCase{"bytes=" + strconv.Itoa(len(body)), body, float64(len(body)) / 1024})
	}
	return cases
}

// invoiceOfSize returns the invoice request with as many generated line
// items as fit in size bytes (at least one), the last description padded
// so that the request is exactly size bytes when one item fits.
func invoiceOfSize(tb testing.TB, invoice []byte, size int) []byte {
	tb.Helper()
	one := invoiceWithItems(tb, invoice, 1)
	if len(one) >= size {
		return one
	}
	// Items differ in length a little: estimate the count from the average
	// item of the last try until it settles, then step to the largest fit.
	n, body := 2, invoiceWithItems(tb, invoice, 2)
	for range 8 {
		next := 1 + (size-len(one))*(n-1)/(len(body)-len(one))
		if next == n {
			break
		}
		n, body = next, invoiceWithItems(tb, invoice, next)
	}
	for ; len(body) > size; body = invoiceWithItems(tb, invoice, n) {
		n--
	}
	for {
		next := invoiceWithItems(tb, invoice, n+1)
		if len(next) > size {
			break
		}
		n, body = n+1, next
	}
	// Descriptions end in "reviewed twice"; the last one in the body is
	// the last item's, and padding it keeps them distinct.
	end := bytes.LastIndex(body, []byte(`reviewed twice"`))
	if end < 0 {
		tb.Fatal("no line item description to pad")
	}
	end += len("reviewed twice")
	pad := strings.Repeat("0123456789", size/10+1)[:size-len(body)]
	return append(body[:end:end], append([]byte(pad), body[end:]...)...)
}

// rulesGrowth returns the 50-item invoice with 1 … 100 rules.
func rulesGrowth(tb testing.TB) []growthCase {
	tb.Helper()
	var req map[string]any
	if err := json.Unmarshal(invoiceWithItems(tb, testkit.ReadTestdata(tb, "invoice-pass.json"), 50), &req); err != nil {
		tb.Fatal(err)
	}
	var cases []growthCase
	for _, n := range []int{1, 4, 16, 64, min(256, engine.DefaultMaxRules)} {
		req["rules"] = growthRules(n)
		body, err := json.Marshal(req)
		if err != nil {
			tb.Fatal(err)
		}
		cases = append(cases, growthCase{"rules=" + strconv.Itoa(n), body, float64(n)})
	}
	return cases
}

// growthRules returns n rules that hold for the invoices of
// invoiceWithItems, cycling through the five rule types of SPEC §3.5, each
// reading a value of every line item.
func growthRules(n int) []any {
	rules := make([]any, n)
	for i := range rules {
		switch i % 5 {
		case 0:
			rules[i] = map[string]any{"type": "sum_equals", "field": "line_items[].line_total", "equals_field": "total", "tolerance": 0.01}
		case 1:
			rules[i] = map[string]any{"type": "gte", "field": "line_items[].quantity", "value": 1}
		case 2:
			rules[i] = map[string]any{"type": "lte", "field": "line_items[].unit_price", "value": 1000}
		case 3:
			rules[i] = map[string]any{"type": "exists_in", "field": "line_items[].quantity", "values": []any{1, 2, 3, 4, 5, 6, 7}}
		default:
			rules[i] = map[string]any{"type": "unique", "field": "line_items[].description"}
		}
	}
	return rules
}

// schemaGrowth returns requests of 5 … 2560 schema properties, named by
// their schema check count. The schema text of 320 properties is 15.2 KB,
// that of 640 is 30 KB: either side of 16 KB, which was once the largest
// schema whose canonical form and hash the engine remembered (now 1 MiB:
// maxRemembered in engine/hash.go), and made a step in this family.
func schemaGrowth(tb testing.TB) []growthCase {
	tb.Helper()
	var cases []growthCase
	for _, n := range []int{5, 20, 80, 320, 640, 1280, 2560} {
		body := propertiesRequest(tb, n)
		checks := 2*n + 1 // root type, then two per property (SPEC §3.1)
		cases = append(cases, growthCase{"checks=" + strconv.Itoa(checks), body, float64(checks)})
	}
	return cases
}

// propertiesRequest returns a request whose schema has n properties,
// alternately {"type":"integer","minimum":0} and
// {"type":"string","pattern":…}, and a document that has them all.
func propertiesRequest(tb testing.TB, n int) []byte {
	tb.Helper()
	props, doc := map[string]any{}, map[string]any{}
	for i := range n {
		name := fmt.Sprintf("p%04d", i)
		if i%2 == 0 {
			props[name] = map[string]any{"type": "integer", "minimum": 0}
			doc[name] = i
		} else {
			props[name] = map[string]any{"type": "string", "pattern": "^[a-z]{3}-[0-9]{4}$"}
			doc[name] = fmt.Sprintf("abc-%04d", i)
		}
	}
	body, err := json.Marshal(map[string]any{
		"task_id":          "growth-" + strconv.Itoa(n),
		"expected_schema":  map[string]any{"type": "object", "properties": props},
		"submitted_output": doc,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

// TestGrowthAllocations holds each growth family to linear growth in
// allocations, which, unlike time, come out the same on a busy machine:
// the allocations added per unit (KB, rule, schema check) from the middle
// request to the largest are within a factor of two of those added from
// the smallest to the middle.
func TestGrowthAllocations(t *testing.T) {
	svc := testkit.NewTestService(t, false)
	for _, family := range []struct {
		name  string
		cases []growthCase
		pick  [3]int // the small, middle and large request: indexes into cases
	}{
		{"document", documentGrowth(t), [3]int{2, 3, 5}},    // 16 KB, 64 KB, 1 MB
		{"rules", rulesGrowth(t), [3]int{2, 3, 4}},          // 16, 64, 100 rules
		{"schema-checks", schemaGrowth(t), [3]int{2, 3, 5}}, // 161, 641, 2561 checks
	} {
		t.Run(family.name, func(t *testing.T) {
			var allocs, units [3]float64
			for i, j := range family.pick {
				c := family.cases[j]
				units[i] = c.units
				allocs[i] = testing.AllocsPerRun(1, func() {
					if _, err := svc.Verify(context.Background(), c.body); err != nil {
						t.Fatal(err)
					}
				})
			}
			lower := (allocs[1] - allocs[0]) / (units[1] - units[0])
			upper := (allocs[2] - allocs[1]) / (units[2] - units[1])
			t.Logf("allocations %v at %v units: %.1f, then %.1f per added unit", allocs, units, lower, upper)
			if upper > 2*lower || upper < lower/2 {
				t.Errorf("allocations per added unit: %.1f from %s to %s, %.1f from there to %s; want within 2x",
					lower, family.cases[family.pick[0]].name, family.cases[family.pick[1]].name,
					upper, family.cases[family.pick[2]].name)
			}
		})
	}
}
