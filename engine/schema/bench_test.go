package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// cpuNow is this process's user+system CPU time in ns, reported next to wall
// time as the peers' benchmark does: the machine is shared, and wall time
// absorbs other tenants' load.
func cpuNow() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// readBenchDoc decodes one file of testdata/peer-invoice: the 8 KB invoice
// schema and documents that scripts/schemabench.sh also gives the peers.
func readBenchDoc(tb testing.TB, name string) any {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "peer-invoice", name))
	if err != nil {
		tb.Fatal(err)
	}
	v, err := decodeJSON(b)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// BenchmarkEvaluateInvoice evaluates the peers' 8 KB invoice (schema compiled
// once, instance decoded once) with full check accounting.
func BenchmarkEvaluateInvoice(b *testing.B) {
	s, err := Compile(readBenchDoc(b, "invoice.schema.json"), nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		file     string
		valid    bool
		failures int
	}{
		{"valid", "invoice.valid.json", true, 0},
		{"invalid", "invoice.invalid.json", false, 1},
		{"invalid50", "invoice.invalid50.json", false, 50},
	} {
		inst := readBenchDoc(b, c.file)
		res, err := s.Evaluate(inst)
		if err != nil {
			b.Fatal(err)
		}
		if res.Valid != c.valid || len(res.Failures) != c.failures {
			b.Fatalf("%s: valid %v with %d failures, want %v with %d", c.file, res.Valid, len(res.Failures), c.valid, c.failures)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuNow()
			for b.Loop() {
				if _, err := s.Evaluate(inst); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuNow()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestEvaluateAllocations keeps a valid evaluation at a constant handful of
// allocations (the result, its described list and one string), whatever the
// instance's size.
func TestEvaluateAllocations(t *testing.T) {
	s, err := Compile(readBenchDoc(t, "invoice.schema.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	inst := readBenchDoc(t, "invoice.valid.json")
	if _, err := s.Evaluate(inst); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := s.Evaluate(inst); err != nil {
			t.Fatal(err)
		}
	})
	limit := 3.0
	if raceEnabled {
		limit = 32 // pooled buffers are dropped at random under -race (seen: 14 to 22)
	}
	if allocs > limit {
		t.Errorf("Evaluate(valid invoice) allocates %v times, want at most %v", allocs, limit)
	}
}

// BenchmarkNumberKeywords evaluates 256 prices, integers and quantities,
// all valid, against number leaves with bounds and multipleOf: the exact
// number path (parse, compare, remainder) on its own.
func BenchmarkNumberKeywords(b *testing.B) {
	for _, c := range []struct{ name, schema string }{
		{"bounds", `{"items":{"type":"number","minimum":0,"exclusiveMaximum":1e7}}`},
		{"multipleOf", `{"items":{"type":"number","multipleOf":0.01}}`},
		{"negativeBounds", `{"items":{"minimum":-5,"maximum":100000,"exclusiveMinimum":-0.5}}`},
	} {
		s, err := Compile(mustDecode(b, c.schema), nil)
		if err != nil {
			b.Fatal(err)
		}
		items := make([]any, 256)
		for i := range items {
			items[i] = json.Number([]string{"19.99", "7", "1250.5", "0.01", "3", "99999", "42.1", "100"}[i%8])
		}
		b.Run(c.name, func(b *testing.B) {
			c0 := cpuNow()
			for b.Loop() {
				if res, err := s.Evaluate(items); err != nil || !res.Valid {
					b.Fatalf("Evaluate: %v, %v", res, err)
				}
			}
			b.ReportMetric(float64(cpuNow()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
