package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/signing"
)

// fastPathSeeds are request bodies for the fast-path tests: the invoices,
// the request-hash vectors and requests that make DecodeRequest give up on
// its fast path or take unusual values through it.
func fastPathSeeds(t testing.TB) [][]byte {
	t.Helper()
	var seeds [][]byte
	for _, name := range []string{
		filepath.Join("..", "testdata", "invoice-pass.json"),
		filepath.Join("..", "testdata", "invoice-fail.json"),
		filepath.Join(vectorsDir, "tv-1.request.json"),
		filepath.Join(vectorsDir, "tv-2.request.json"),
		filepath.Join(vectorsDir, "tv-3.request.json"),
	} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, s := range []string{
		`{"task_id":"t","expected_schema":{},"submitted_output":1,"unknown":2}`,
		`{"task_id":"t","task_id":"u","expected_schema":{},"submitted_output":1}`,
		`{"task_id":"t","expected_schema":{"a":1,"a":2},"submitted_output":1}`,
		`{"task_id":"t","expected_schema":{},"submitted_output":[[[[[[1]]]]]]}`,
		`{"task_id":"t","expected_schema":{},"submitted_output":9007199254740993}`,
		"{\"task_id\":\"t\xff\",\"expected_schema\":{},\"submitted_output\":1}",
		`{"task_id":"\u00e9\"\\\n\u0001<&>","agent_id":"\ud83d\ude00","expected_schema":true,"submitted_output":null,` +
			`"bounds":{"a[\"\u00e9 x\"]":{"min":-0.0,"max":1e3,"if_present":true},"b":{"min":"2026-01-01"}},` +
			`"rules":[{"type":"exists_in","field":"a","values":[1,"x",null,{"k":[true]}],"tolerance":0,"if_present":false},` +
			`{"type":"gte","field":"a","value":-2.50}],"enforce_rules":true,"strict_content_check":false,"detail":"compact"}`,
		`{"task_id":"t","expected_schema":{},"submitted_output":1,"bounds":null,"rules":null,"agent_id":null}`,
		`{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"sum_equals","field":"a","equals":1,"equals_field":"b"}]}`,
		` { "task_id" : "t" , "expected_schema" : { } , "submitted_output" : 1 } `,
		`[]`, `{}`, `{"task_id":"t"} x`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// checkFastPath fails unless a request DecodeRequest accepts decodes the
// same a second time (its bounds and rules then remembered), its deferred
// schema decodes, the careful split (splitObject, for malformed bodies)
// finds the members DecodeMembers found, and its filled bounds and rules
// are written as JSON text that canonicalizes.
func checkFastPath(t *testing.T, body []byte) {
	t.Helper()
	v := New(&Options{MaxDepth: 5})
	first, err := v.DecodeRequest(body)
	if err != nil {
		return
	}
	if first.schema != nil {
		t.Fatalf("DecodeRequest(%q) decoded expected_schema up front", body)
	}
	if _, err := first.SchemaDocument(); err != nil {
		t.Fatalf("DecodeRequest(%q) deferred schema: %v", body, err)
	}
	again, err := v.DecodeRequest(body)
	if err != nil {
		t.Fatalf("DecodeRequest(%q) a second time: %v", body, err)
	}
	if _, err := again.SchemaDocument(); err != nil {
		t.Fatalf("DecodeRequest(%q) a second time, deferred schema: %v", body, err)
	}
	if diff := cmp.Diff(first, again, cmp.AllowUnexported(Request{}, Bound{}, Rule{}, Limit{}, Path{}, step{})); diff != "" {
		t.Fatalf("DecodeRequest(%q) differs the second time (-first +second):\n%s", body, diff)
	}
	var raw requestMembers
	if _, se := splitObject(body, first.maxDepth, &raw); se != nil {
		t.Fatalf("splitObject(%q) = %+v, but DecodeRequest accepted it", body, *se)
	}
	if diff := cmp.Diff(first.raw, raw); diff != "" {
		t.Fatalf("splitObject(%q) members differ (-DecodeMembers +split):\n%s", body, diff)
	}
	for _, part := range []struct {
		name   string
		filled any
	}{
		{"bounds", first.filledBounds()},
		{"rules", first.filledRules()},
	} {
		text, err := json.Marshal(part.filled)
		if err != nil {
			t.Fatalf("filled %s of %q do not marshal: %v", part.name, body, err)
		}
		if _, err := signing.Canonicalize(text); err != nil {
			t.Fatalf("filled %s text %s does not canonicalize: %v", part.name, text, err)
		}
	}
}

func TestDecodeRequestFastPath(t *testing.T) {
	for i, body := range fastPathSeeds(t) {
		t.Run(string(rune('a'+i)), func(t *testing.T) { checkFastPath(t, body) })
	}
}

// FuzzDecodeRequestFastPath: on any body DecodeRequest accepts, checkFastPath holds.
func FuzzDecodeRequestFastPath(f *testing.F) {
	for _, seed := range fastPathSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkFastPath(t, body) })
}

// BenchmarkDecodeRequest decodes the 1 KB invoice request (schema checked,
// not decoded), and the same with the schema decoded as a miss of the
// compiled-schema cache does.
func BenchmarkDecodeRequest(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "testdata", "invoice-pass.json"))
	if err != nil {
		b.Fatal(err)
	}
	v := New(nil)
	for _, tt := range []struct {
		name string
		fn   func() error
	}{
		{"fast", func() error { _, err := v.DecodeRequest(body); return err }},
		{"fast+schema", func() error {
			r, err := v.DecodeRequest(body)
			if err == nil {
				_, err = r.SchemaDocument()
			}
			return err
		}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := tt.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
