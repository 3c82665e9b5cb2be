package signing

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

func TestRequestHashVectors(t *testing.T) {
	dir := filepath.Join(repoTestdata, "request-hash")
	for _, name := range []string{"tv-1", "tv-2", "tv-3"} {
		t.Run(name, func(t *testing.T) {
			canonical := readFile(t, filepath.Join(dir, name+".canonical.json"))
			wantHash := strings.TrimSpace(string(readFile(t, filepath.Join(dir, name+".sha256"))))
			got, err := Canonicalize(canonical)
			if err != nil {
				t.Fatalf("Canonicalize: %v", err)
			}
			if !bytes.Equal(got, canonical) {
				t.Errorf("Canonicalize(canonical form) changed it:\ngot  %s\nwant %s", got, canonical)
			}
			if h := HashCanonical(got); h != wantHash {
				t.Errorf("HashCanonical = %s, want %s", h, wantHash)
			}
			// The request itself, re-indented, must land on the same hash
			// once the engine fills the defaults; here only check that the
			// canonical form does not depend on whitespace or key order.
			var v any
			if err := json.Unmarshal(canonical, &v); err != nil {
				t.Fatalf("parsing canonical vector: %v", err)
			}
			indented, _ := json.MarshalIndent(v, "", "   ")
			again, err := Canonicalize(indented)
			if err != nil {
				t.Fatalf("Canonicalize(indented): %v", err)
			}
			if h := HashCanonical(again); h != wantHash {
				t.Errorf("hash of re-indented vector = %s, want %s", h, wantHash)
			}
		})
	}
}

func TestCanonicalizeJCSSuite(t *testing.T) {
	dir := filepath.Join(repoTestdata, "jcs")
	inputs, err := filepath.Glob(filepath.Join(dir, "input", "*.json"))
	if err != nil || len(inputs) != 6 {
		t.Fatalf("want the 6 JCS input vectors in %s, found %d (err %v)", dir, len(inputs), err)
	}
	for _, in := range inputs {
		name := filepath.Base(in)
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			want := readFile(t, filepath.Join(dir, "output", name))
			got, err := Canonicalize(readFile(t, in))
			if err != nil {
				t.Fatalf("Canonicalize: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Canonicalize(%s):\ngot  %s\nwant %s", name, got, want)
			}
			hexWant := strings.Fields(string(readFile(t, filepath.Join(dir, "outhex", strings.TrimSuffix(name, ".json")+".txt"))))
			if len(hexWant) != len(got) {
				t.Errorf("outhex has %d bytes, canonical form %d", len(hexWant), len(got))
			}
		})
	}
}

// numberInputs are JSON texts for f that differ from its canonical form: the
// long exponent form and, for integers, a trailing ".0".
func numberInputs(f float64) []string {
	in := []string{strconv.FormatFloat(f, 'e', -1, 64), strconv.FormatFloat(f, 'E', 17, 64)}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		in = append(in, strconv.FormatFloat(f, 'f', 1, 64))
	}
	return in
}

func TestCanonicalizeRFC8785Numbers(t *testing.T) {
	f, err := os.Open(filepath.Join(repoTestdata, "jcs", "rfc8785-numbers.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	rows := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 2 {
			t.Fatalf("bad row %q", sc.Text())
		}
		rows++
		bits, err := strconv.ParseUint(cols[0], 16, 64)
		if err != nil {
			t.Fatalf("bad hex %q: %v", cols[0], err)
		}
		v := math.Float64frombits(bits)
		want := cols[1]
		t.Run(cols[0], func(t *testing.T) {
			if want == "ERROR" {
				// NaN and ±Inf have no JSON text; every spelling a client
				// might send must fail closed.
				for _, in := range []string{"NaN", "Infinity", "-Infinity", "1e400", "-1e400", "[1e999]"} {
					if got, err := Canonicalize([]byte(in)); err == nil {
						t.Errorf("Canonicalize(%s) = %s, want an error", in, got)
					}
				}
				if _, err := jcs.NumberToJSON(v); err == nil {
					t.Errorf("jcs.NumberToJSON(%v) gave no error", v)
				}
				return
			}
			for _, in := range numberInputs(v) {
				got, err := Canonicalize([]byte("[" + in + "]"))
				if err != nil {
					t.Fatalf("Canonicalize([%s]): %v", in, err)
				}
				if string(got) != "["+want+"]" {
					t.Errorf("Canonicalize([%s]) = %s, want [%s]", in, got, want)
				}
			}
		})
	}
	if err := sc.Err(); err != nil || rows != 26 {
		t.Fatalf("read %d rows of the RFC 8785 table (err %v), want 26", rows, err)
	}
}

func TestCanonicalizeES6Numbers(t *testing.T) {
	f, err := os.Open(filepath.Join(repoTestdata, "jcs", "es6testfile10k.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines, failures := 0, 0
	for sc.Scan() {
		hexBits, want, ok := strings.Cut(sc.Text(), ",")
		if !ok {
			t.Fatalf("bad line %q", sc.Text())
		}
		lines++
		bits, err := strconv.ParseUint(hexBits, 16, 64)
		if err != nil {
			t.Fatalf("bad hex %q: %v", hexBits, err)
		}
		v := math.Float64frombits(bits)
		for _, in := range []string{strconv.FormatFloat(v, 'e', -1, 64), strconv.FormatFloat(v, 'g', -1, 64), strconv.FormatFloat(v, 'f', -1, 64)} {
			got, err := Canonicalize([]byte(in))
			if err != nil || string(got) != want {
				if failures++; failures <= 10 {
					t.Errorf("Canonicalize(%s) = %s, %v; want %s", in, got, err, want)
				}
			}
		}
	}
	if err := sc.Err(); err != nil || lines != 10000 {
		t.Fatalf("read %d lines (err %v), want 10000", lines, err)
	}
	if failures > 0 {
		t.Errorf("%d of %d numbers wrong", failures, lines)
	}
}

// TestCanonicalizeRejects: what is not I-JSON has no canonical form; each
// case is refused by the reference (jcs) too, so that it tests something.
func TestCanonicalizeRejects(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"duplicate key", `{"a":1,"a":2}`},
		{"duplicate key apart", `{"b":1,"a":2,"c":3,"a":4}`},
		{"duplicate key escaped", `{"a":1,"\u0061":2}`},
		{"duplicate key deep", `[{"x":{"k":1,"k":1}}]`},
		{"invalid utf-8", "\"\xff\""},
		{"invalid utf-8 in key", "{\"\xc3\":1}"},
		{"utf-8 surrogate", "\"\xed\xa0\x80\""},
		{"overlong utf-8", "\"\xc0\xaf\""},
		{"lone high surrogate", `"\ud800"`},
		{"lone low surrogate", `"\udc00"`},
		{"high surrogate then letter", `"\ud800\u0041"`},
		{"high surrogate then high", `"\ud800\ud800"`},
		{"infinity", `1e400`},
		{"negative infinity", `[-1e400]`},
		{"nan", `NaN`},
		{"too deep", strings.Repeat("[", maxCanonicalDepth+1) + strings.Repeat("]", maxCanonicalDepth+1)},
		{"trailing data", `{} {}`},
		{"trailing bracket", `[1]]`},
		{"leading zero", `01`},
		{"single quote", `{'a':1}`},
		{"control character", "\"a\nb\""},
		{"bad escape", `"\x41"`},
		{"short unicode escape", `"\u12"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := Canonicalize([]byte(tt.in)); err == nil {
				t.Errorf("Canonicalize(%.40q) = %.40q, want an error", tt.in, got)
			}
			if _, err := jcs.Transform([]byte(tt.in)); err == nil {
				t.Errorf("jcs.Transform(%.40q) accepts it; the case tests nothing", tt.in)
			}
		})
	}
	if got, err := Canonicalize(nil); err == nil {
		t.Errorf("Canonicalize(nil) = %s, want an error", got)
	}
}

func TestHashCanonical(t *testing.T) {
	// SHA-256 of the empty string and of "abc" (FIPS 180-2).
	for in, want := range map[string]string{
		"":    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"abc": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	} {
		if got := HashCanonical([]byte(in)); got != want {
			t.Errorf("HashCanonical(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSignedDocument(t *testing.T) {
	got, err := SignedDocument(ContextVerify, "v1-2026-11a", "2026-11-01T00:00:00.000000+00:00",
		[]byte(` { "z": 1.0, "a": [0.966667, "\u00e9<>&"] } `))
	if err != nil {
		t.Fatalf("SignedDocument: %v", err)
	}
	const want = `{"algorithm":"Ed25519","attested_at":"2026-11-01T00:00:00.000000+00:00",` +
		`"context":"json-schema-verifier/verify-schema-attestation/v1","key_version":"v1-2026-11a",` +
		`"response":{"a":[0.966667,"é<>&"],"z":1}}`
	if string(got) != want {
		t.Errorf("SignedDocument:\ngot  %s\nwant %s", got, want)
	}
}

func TestSignedDocumentRejects(t *testing.T) {
	tests := []struct {
		name                  string
		context, kv, at, resp string
	}{
		{"member injection", ContextVerify, "v1", "t", `1,"context":"x"`},
		{"member injection without duplicate", ContextVerify, "v1", "t", `1,"zzz":2`},
		{"two values", ContextVerify, "v1", "t", `{} {}`},
		{"empty response", ContextVerify, "v1", "t", ``},
		{"duplicate key in response", ContextVerify, "v1", "t", `{"a":1,"a":2}`},
		{"invalid utf-8 in response", ContextVerify, "v1", "t", "\"\xff\""},
		{"invalid utf-8 in key version", ContextVerify, "v1\xff", "t", `{}`},
		{"invalid utf-8 in context", "c\xfe", "v1", "t", `{}`},
		{"empty context", "", "v1", "t", `{}`},
		{"empty key version", ContextVerify, "", "t", `{}`},
		{"empty timestamp", ContextVerify, "v1", "", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := SignedDocument(tt.context, tt.kv, tt.at, []byte(tt.resp)); err == nil {
				t.Errorf("SignedDocument(%q) = %s, want an error", tt.resp, got)
			}
		})
	}
}
