package engine

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/engine/schema"
)

// fieldNamePattern is every field an error may name: plain member names,
// positions "(member #n)", indexes and quoted plain bound paths; never a
// key or value as the caller wrote it otherwise.
var fieldNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.$\[\]"#() -]+$`)

// fuzzRequestSeeds are the repository's invoices and a few hostile shapes.
func fuzzRequestSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var seeds [][]byte
	for _, name := range []string{"invoice-pass.json", "invoice-fail.json"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, s := range []string{
		`{"task_id":"t","expected_schema":{"$ref":"#"},"submitted_output":{}}`,
		`{"task_id":"t","expected_schema":{"enum":[1,"a",null,[1],{"a":1}]},"submitted_output":[[[[1]]]]}`,
		`{"task_id":"t","expected_schema":{"pattern":"(?=a)"},"submitted_output":"a"}`,
		`{"task_id":"t","expected_schema":{"multipleOf":1e-300},"submitted_output":5e-324}`,
		`{"task_id":"t","expected_schema":true,"submitted_output":{"a":1,"a":2}}`,
		`{"task_id":"t","expected_schema":true,"submitted_output":"\ud800"}`,
		`{"task_id":"t","expected_schema":true,"submitted_output":9007199254740993}`,
		`{"task_id":"t","expected_schema":{"properties":{"<b>":{"type":"x"}}},"submitted_output":1,"bounds":{"a[":{"min":1}},"rules":[{"type":"nope","field":"]"}]}`,
		`{"task_id":"t","expected_schema":true,"submitted_output":{"a":[1,2],"t":3},"rules":[{"type":"sum_equals","field":"a[]","equals_field":"t"}],"bounds":{"t":{"min":0,"max":"2026-01-01"}}}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// FuzzDecodeRequest decodes any body and checks any request it accepts: no
// panic; a failure is an *InvalidRequestError whose fields are field paths
// (never the caller's keys or values verbatim); an accepted request checks
// to an outcome or a refusal of the same kind.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range fuzzRequestSeeds(f) {
		f.Add(s)
	}
	v := New(&Options{Schema: schema.Options{MaxSteps: 100_000}})
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := v.DecodeRequest(body)
		if err != nil {
			checkInvalid(t, err)
			return
		}
		out, err := v.Check(req, "")
		if err != nil {
			checkInvalid(t, err)
			return
		}
		if out.Schema.Passed > out.Schema.Total || out.Integrity.Passed > out.Integrity.Total || out.Overall.Passed > out.Overall.Total {
			t.Errorf("impossible ratios: %+v %+v %+v", out.Schema, out.Integrity, out.Overall)
		}
		if out.Pass {
			for _, fd := range out.Findings {
				if fd.Blocking {
					t.Errorf("passed with a blocking finding: %+v", fd)
				}
			}
		}
	})
}

func checkInvalid(t *testing.T, err error) {
	t.Helper()
	var invalid *InvalidRequestError
	if !errors.As(err, &invalid) {
		t.Fatalf("error %v (%T), want an *InvalidRequestError", err, err)
	}
	if len(invalid.Fields) == 0 {
		t.Fatalf("an invalid request without field problems")
	}
	for _, p := range invalid.Fields {
		if !fieldNamePattern.MatchString(p.Field) || strings.TrimSpace(p.Problem) == "" || strings.TrimSpace(p.Fix) == "" {
			t.Errorf("field problem %+v: want a plain field path, a problem and a fix", p)
		}
	}
}
