// Package schemapeers measures santhosh-tekuri/jsonschema v6, one of the
// peers scripts/schemabench.sh compares engine/schema with, on the invoice
// of engine/schema/testdata/peer-invoice. It is its own module so that the
// verifier does not depend on the peer.
//
//	go test -run '^$' -bench Santhosh -benchtime 2s -cpu 1
package schemapeers

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// invoiceDir is the invoice schema and documents engine/schema's
// BenchmarkEvaluateInvoice reads.
var invoiceDir = filepath.Join("..", "..", "engine", "schema", "testdata", "peer-invoice")

// schemaURL is the $id of the invoice schema.
const schemaURL = "https://example.com/invoice.schema.json"

// cpuNow is this process's user+system CPU time in ns, reported as
// cpu-ns/op beside wall ns/op: other work on a shared machine inflates wall
// time more than CPU time.
func cpuNow() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// readJSON decodes one file of invoiceDir the way santhosh expects.
func readJSON(tb testing.TB, name string) any {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(invoiceDir, name))
	if err != nil {
		tb.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		tb.Fatalf("decoding %s: %v", name, err)
	}
	return v
}

// compileInvoice compiles the invoice schema.
func compileInvoice(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, readJSON(tb, "invoice.schema.json")); err != nil {
		tb.Fatal(err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// documents are the invoice documents and the number of leaf failures each
// must have (santhosh collects every failure, as engine/schema does).
var documents = []struct {
	file     string
	failures int
}{
	{"invoice.valid.json", 0},
	{"invoice.invalid.json", 1},
	{"invoice.invalid50.json", 50},
}

// leafFailures counts the failures at the leaves of santhosh's error tree.
func leafFailures(err error) int {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return 0
	}
	if len(ve.Causes) == 0 {
		return 1
	}
	n := 0
	for _, c := range ve.Causes {
		n += leafFailures(c)
	}
	return n
}

// TestInvoiceVerdicts checks that the peer sees the documents as engine/schema
// does, so the benchmark compares the same work.
func TestInvoiceVerdicts(t *testing.T) {
	s := compileInvoice(t)
	for _, d := range documents {
		err := s.Validate(readJSON(t, d.file))
		if got := leafFailures(err); got != d.failures || (err == nil) != (d.failures == 0) {
			t.Errorf("%s: %d failures (%v), want %d", d.file, got, err, d.failures)
		}
	}
}

// benchmarkSanthosh validates one document, the schema compiled and the
// document decoded once.
func benchmarkSanthosh(b *testing.B, file string) {
	s := compileInvoice(b)
	doc := readJSON(b, file)
	c0 := cpuNow()
	for b.Loop() {
		_ = s.Validate(doc)
	}
	b.ReportMetric(float64(cpuNow()-c0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkSanthoshValid(b *testing.B)     { benchmarkSanthosh(b, "invoice.valid.json") }
func BenchmarkSanthoshInvalid(b *testing.B)   { benchmarkSanthosh(b, "invoice.invalid.json") }
func BenchmarkSanthoshInvalid50(b *testing.B) { benchmarkSanthosh(b, "invoice.invalid50.json") }
