package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/signing"
)

// vectorsDir holds the hosted service's request-hash vectors, vendored in the
// repository's testdata/ (see its SOURCE note).
var vectorsDir = filepath.Join("..", "testdata", "request-hash")

// TestRequestHashVectors reproduces the three published request-hash vectors
// byte for byte: the canonical form and its SHA-256.
func TestRequestHashVectors(t *testing.T) {
	for _, name := range []string{"tv-1", "tv-2", "tv-3"} {
		t.Run(name, func(t *testing.T) {
			body := readFile(t, filepath.Join(vectorsDir, name+".request.json"))
			wantCanon := bytes.TrimSpace(readFile(t, filepath.Join(vectorsDir, name+".canonical.json")))
			wantHash := strings.TrimSpace(string(readFile(t, filepath.Join(vectorsDir, name+".sha256"))))

			req, err := New(nil).DecodeRequest(body)
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			var gotCanon []byte
			hashes, err := New(&Options{CacheSize: -1}).Hashes(req, func(b []byte) string {
				if bytes.HasPrefix(b, []byte(`{"agent_id":`)) {
					gotCanon = bytes.Clone(b)
				}
				return signing.HashCanonical(b)
			})
			if err != nil {
				t.Fatalf("Hashes: %v", err)
			}
			if !bytes.Equal(gotCanon, wantCanon) {
				t.Errorf("canonical request\n got %s\nwant %s", gotCanon, wantCanon)
			}
			if hashes.Request != wantHash {
				t.Errorf("request_hash = %s, want %s", hashes.Request, wantHash)
			}
		})
	}
}

func TestRulesHashIsFieldsAsSent(t *testing.T) {
	v := New(nil)
	a, err := v.DecodeRequest([]byte(`{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"unique","field":"a"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.DecodeRequest([]byte(`{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"unique","field":"a","tolerance":1e-9}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ha, _ := freshHashes(a)
	hb, _ := freshHashes(b)
	if ha.Rules == hb.Rules {
		t.Error("rules_hash equal with and without an explicit default; it must hash the fields as sent")
	}
	if ha.Request != hb.Request {
		t.Error("request_hash differs with and without an explicit default; it must fill defaults")
	}
	want := signing.HashCanonical([]byte(`{"bounds":null,"rules":[{"field":"a","type":"unique"}]}`))
	if ha.Rules != want {
		t.Errorf("rules_hash = %s, want %s", ha.Rules, want)
	}
}

// freshHashes is Verifier.Hashes of a Verifier that remembers nothing.
func freshHashes(r *Request) (Hashes, error) {
	return New(&Options{CacheSize: -1}).Hashes(r, signing.HashCanonical)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerifierHashesRemembers: Verifier.Hashes, which remembers what small
// schemas and small bounds and rules give the hashes by their bytes as
// sent, gives the hashes a Verifier that remembers nothing gives, on the first request and on
// every later one: for the vectors, one schema spelt two ways, the same
// rules with and without bounds, absent, null and empty checks, and a
// schema and rules too large to be remembered.
func TestVerifierHashesRemembers(t *testing.T) {
	var bodies [][]byte
	for _, name := range []string{"tv-1", "tv-2", "tv-3"} {
		bodies = append(bodies, readFile(t, filepath.Join(vectorsDir, name+".request.json")))
	}
	bodies = append(bodies,
		[]byte(`{"task_id":"t","expected_schema":{"type":"object","minProperties":1},"submitted_output":{}}`),
		[]byte(`{"task_id":"t","expected_schema":{ "minProperties" : 1.0, "type":"object" },"submitted_output":{}}`),
		[]byte(`{"task_id":"t","expected_schema":{"description":"`+strings.Repeat("x", maxRemembered)+`"},"submitted_output":1}`),
		[]byte(`{"task_id":"t","expected_schema":{},"submitted_output":{"a":[1]},"rules":[{"type":"unique","field":"a[]"}]}`),
		[]byte(`{"task_id":"t","expected_schema":{},"submitted_output":{"a":[1]},"rules":[{"type":"unique","field":"a[]"}],"bounds":{"a[]":{"min":0}}}`),
		[]byte(`{"task_id":"t","expected_schema":{},"submitted_output":{"a":[1]},"bounds":{"a[]":{"min":0}},"rules":[{"field":"a[]","type":"unique"}]}`),
		[]byte(`{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":null,"bounds":null}`),
		[]byte(`{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[],"bounds":{}}`),
		[]byte(`{"task_id":"t","expected_schema":{},"submitted_output":{"a":1},"rules":[{"type":"gte","field":"a","value":0,"tolerance":1.`+strings.Repeat("0", maxRemembered)+`}]}`),
	)
	v := New(nil)
	for round := range 2 {
		for i, body := range bodies {
			req, err := v.DecodeRequest(body)
			if err != nil {
				t.Fatalf("request %d: DecodeRequest: %v", i, err)
			}
			want, err := freshHashes(req)
			if err != nil {
				t.Fatalf("request %d: fresh Hashes: %v", i, err)
			}
			got, err := v.Hashes(req, signing.HashCanonical)
			if err != nil {
				t.Fatalf("request %d: Verifier.Hashes: %v", i, err)
			}
			if got != want {
				t.Errorf("round %d, request %d: Verifier.Hashes = %+v, want %+v", round, i, got, want)
			}
		}
	}
	// Six small schemas as sent (the two spellings count twice), the large
	// one not; seven small bounds-and-rules pairs as sent (the vectors',
	// none, the three, null and empty), the large one not.
	if n := v.schemaText.len(); n != 6 {
		t.Errorf("remembered %d schemas, want 6", n)
	}
	if n := v.checksText.len(); n != 8 {
		t.Errorf("remembered %d bounds-and-rules pairs, want 8", n)
	}
}

// FuzzRememberedMatchesFresh: one Verifier, kept across every input so that
// its remembered schemas, rules and bounds are hit by later inputs, decodes
// and hashes each request exactly as a fresh Verifier does.
func FuzzRememberedMatchesFresh(f *testing.F) {
	for _, seed := range fastPathSeeds(f) {
		f.Add(seed)
	}
	opts := &Options{MaxDepth: 5}
	shared := New(opts)
	f.Fuzz(func(t *testing.T, body []byte) {
		fresh, freshErr := New(opts).DecodeRequest(body)
		got, err := shared.DecodeRequest(body)
		if (err == nil) != (freshErr == nil) {
			t.Fatalf("DecodeRequest(%q): remembered error %v, fresh error %v", body, err, freshErr)
		}
		if err != nil {
			return
		}
		for _, r := range []*Request{fresh, got} {
			if _, err := r.SchemaDocument(); err != nil {
				t.Fatalf("DecodeRequest(%q): deferred schema: %v", body, err)
			}
		}
		if diff := cmp.Diff(fresh, got, cmp.AllowUnexported(Request{}, Bound{}, Rule{}, Limit{}, Path{}, step{})); diff != "" {
			t.Fatalf("DecodeRequest(%q) differs from a fresh decode (-fresh +remembered):\n%s", body, diff)
		}
		want, wantErr := freshHashes(fresh)
		have, err := shared.Hashes(got, signing.HashCanonical)
		if (err == nil) != (wantErr == nil) || have != want {
			t.Fatalf("Hashes(%q) = %+v, %v; fresh %+v, %v", body, have, err, want, wantErr)
		}
	})
}
