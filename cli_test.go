package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gowebpki/jcs"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

// testSeed is a fixed signing seed so key versions are stable in goldens.
var testSeed = bytes.Repeat([]byte{7}, ed25519.SeedSize)

func testEnv(name string) string {
	if name == "VERIFIER_SIGNING_KEY" {
		return base64.StdEncoding.EncodeToString(testSeed)
	}
	return ""
}

// runCLI runs the program and returns stdout and the exit code.
func runCLI(t *testing.T, stdin string, args ...string) ([]byte, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr, testEnv)
	code := 0
	var ee exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		t.Fatalf("run %v: %v (stderr %s)", args, err, stderr.String())
	}
	return stdout.Bytes(), code
}

func TestVerifyGolden(t *testing.T) {
	for _, tt := range []struct {
		name     string
		wantCode int
	}{{"invoice-pass", 0}, {"invoice-fail", 1}} {
		for _, detail := range []string{"full", "compact"} {
			t.Run(tt.name+"/"+detail, func(t *testing.T) {
				req := readJSON(t, filepath.Join("testdata", tt.name+".json"))
				req["detail"] = detail
				body, _ := json.Marshal(req)
				out, code := runCLI(t, string(body), "verify", "--data-dir", t.TempDir())
				if code != tt.wantCode {
					t.Fatalf("exit code = %d, want %d; output %s", code, tt.wantCode, out)
				}
				checkSignatureIndependently(t, out)
				got := normalize(t, out)
				golden := filepath.Join("testdata", "golden", tt.name+"."+detail+".json")
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("missing golden (run go test -update): %v", err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("answer differs from %s (-want +got):\n%s", golden, diff)
				}
			})
		}
	}
}

// checkSignatureIndependently rebuilds the signed document from the printed
// answer with jcs and crypto/ed25519 only, not with the signing package.
func checkSignatureIndependently(t *testing.T, answer []byte) {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(answer, &doc); err != nil {
		t.Fatalf("answer is not a JSON object: %v", err)
	}
	var att struct {
		Algorithm, KeyVersion, Timestamp, Signature string
	}
	var raw map[string]string
	if err := json.Unmarshal(doc["attestation"], &raw); err != nil {
		t.Fatalf("attestation: %v", err)
	}
	att.Algorithm, att.KeyVersion, att.Timestamp, att.Signature = raw["algorithm"], raw["key_version"], raw["timestamp"], raw["signature"]
	delete(doc, "attestation")
	response, _ := json.Marshal(doc)
	signed, _ := json.Marshal(map[string]any{
		"context": "json-schema-verifier/verify-schema-attestation/v1", "algorithm": att.Algorithm,
		"key_version": att.KeyVersion, "attested_at": att.Timestamp, "response": json.RawMessage(response),
	})
	canonical, err := jcs.Transform(signed)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := base64.StdEncoding.DecodeString(att.Signature)
	if err != nil {
		t.Fatal(err)
	}
	pub := ed25519.NewKeyFromSeed(testSeed).Public().(ed25519.PublicKey)
	if !ed25519.Verify(pub, canonical, sig) {
		t.Error("signature does not verify over the JCS bytes rebuilt from the printed answer")
	}
	var verifiedAt string
	json.Unmarshal(doc["verified_at"], &verifiedAt)
	if att.Algorithm != "Ed25519" || att.Timestamp != verifiedAt {
		t.Errorf("attestation %+v: want Ed25519 and timestamp = verified_at %s", att, verifiedAt)
	}
}

// normalize blanks the fields that vary per call and indents the answer.
func normalize(t *testing.T, answer []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(answer, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"verification_id", "verified_at", "verifier_version"} {
		if _, ok := m[k]; !ok {
			t.Errorf("answer lacks %s", k)
		}
		m[k] = "<" + k + ">"
	}
	if att, ok := m["attestation"].(map[string]any); ok {
		att["timestamp"], att["signature"] = "<timestamp>", "<signature>"
	}
	// Keep the documented top-level key order of the raw answer.
	var ordered bytes.Buffer
	keys := orderedKeys(t, answer)
	ordered.WriteString("{\n")
	for i, k := range keys {
		var v bytes.Buffer
		enc := json.NewEncoder(&v)
		enc.SetEscapeHTML(false)
		enc.SetIndent("  ", "  ")
		if err := enc.Encode(m[k]); err != nil {
			t.Fatal(err)
		}
		ordered.WriteString("  " + `"` + k + `": ` + strings.TrimSuffix(v.String(), "\n"))
		if i < len(keys)-1 {
			ordered.WriteString(",")
		}
		ordered.WriteString("\n")
	}
	ordered.WriteString("}\n")
	return ordered.Bytes()
}

func orderedKeys(t *testing.T, object []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(object))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestVerifyJSONL(t *testing.T) {
	pass, _ := os.ReadFile(filepath.Join("testdata", "invoice-pass.json"))
	fail, _ := os.ReadFile(filepath.Join("testdata", "invoice-fail.json"))
	compact := func(b []byte) string {
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	input := strings.Join([]string{compact(pass), `{"task_id":"x","bogus":1}`, "", compact(fail), `not json`, compact(pass)}, "\n")
	out, code := runCLI(t, input, "verify", "--jsonl", "--data-dir", t.TempDir())
	if code != 2 {
		t.Errorf("exit code = %d, want 2 (an invalid request)", code)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{"pass", "invalid_request", "fail", "invalid_request", "pass"}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v", i, err)
		}
		got, _ := m["result"].(string)
		if got == "" {
			got, _ = m["code"].(string)
		}
		if got != want[i] {
			t.Errorf("line %d = %s, want %s", i, got, want[i])
		}
	}
}

func TestReceiptVerifyCLI(t *testing.T) {
	dir := t.TempDir()
	reqPath := filepath.Join("testdata", "invoice-fail.json")
	req, _ := os.ReadFile(reqPath)
	answer, code := runCLI(t, string(req), "verify", "--data-dir", dir)
	if code != 1 {
		t.Fatalf("verify exit code = %d, want 1", code)
	}
	receipt := filepath.Join(dir, "receipt.json")
	if err := os.WriteFile(receipt, answer, 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name string, mutate func(map[string]any)) string {
		m := readJSON(t, reqPath)
		mutate(m)
		b, _ := json.Marshal(m)
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o600)
		return p
	}
	pub := base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(testSeed).Public().(ed25519.PublicKey))
	tests := []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"key store", []string{"--data-dir", dir}, 0},
		{"raw key", []string{"--key", pub}, 0},
		{"with request", []string{"--key", pub, "--request", reqPath}, 0},
		{"swapped output", []string{"--key", pub, "--request", write("out.json", func(m map[string]any) {
			m["submitted_output"].(map[string]any)["total"] = json.Number("1")
		})}, 1},
		{"swapped schema", []string{"--key", pub, "--request", write("schema.json", func(m map[string]any) {
			m["expected_schema"] = map[string]any{"type": "object"}
		})}, 1},
		{"changed rules", []string{"--key", pub, "--request", write("rules.json", func(m map[string]any) {
			m["rules"] = []any{}
		})}, 1},
		{"wrong key", []string{"--key", base64.StdEncoding.EncodeToString(make([]byte, 32))}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"receipt", "verify", "--json"}, tt.args...)
			out, code := runCLI(t, "", append(args, receipt)...)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d; report %s", code, tt.wantCode, out)
			}
			var report struct{ Valid bool }
			if err := json.Unmarshal(out, &report); err != nil || report.Valid != (tt.wantCode == 0) {
				t.Errorf("report %s: valid = %v, want %v (%v)", out, report.Valid, tt.wantCode == 0, err)
			}
		})
	}
}

func TestKeysShowAndRotate(t *testing.T) {
	dir := t.TempDir()
	env := func(string) string { return "" }
	show := func() []map[string]string {
		var stdout bytes.Buffer
		if err := run(context.Background(), []string{"keys", "show", "--data-dir", dir}, nil, &stdout, &bytes.Buffer{}, env); err != nil {
			t.Fatal(err)
		}
		var out struct{ PublicKeys []map[string]string }
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out.PublicKeys
	}
	// The first rotation makes the first key (showing makes none:
	// TestKeysShowWithoutKey).
	if err := run(context.Background(), []string{"keys", "rotate", "--data-dir", dir}, nil, &bytes.Buffer{}, &bytes.Buffer{}, env); err != nil {
		t.Fatal(err)
	}
	before := show()
	if len(before) != 1 || before[0]["algorithm"] != "Ed25519" || before[0]["publicKeyEncoding"] != "base64 of the raw 32-byte Ed25519 public key" {
		t.Fatalf("keys show = %v, want one Ed25519 key", before)
	}
	if err := run(context.Background(), []string{"keys", "rotate", "--data-dir", dir}, nil, &bytes.Buffer{}, &bytes.Buffer{}, env); err != nil {
		t.Fatal(err)
	}
	after := show()
	if len(after) != 2 || after[0]["keyVersion"] != before[0]["keyVersion"] || after[1]["keyVersion"] == before[0]["keyVersion"] {
		t.Errorf("after rotate keys = %v, want the old key and a new one", after)
	}
}

// TestReceiptVerifyCLIText: the text report names every check with what it
// found; no line is a bare name with an empty detail.
func TestReceiptVerifyCLIText(t *testing.T) {
	dir := t.TempDir()
	reqPath := filepath.Join("testdata", "invoice-pass.json")
	req, _ := os.ReadFile(reqPath)
	answer, code := runCLI(t, string(req), "verify", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("verify exit code = %d, want 0", code)
	}
	receipt := filepath.Join(dir, "receipt.json")
	if err := os.WriteFile(receipt, answer, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runCLI(t, "", "receipt", "verify", "--data-dir", dir, "--request", reqPath, receipt)
	if code != 0 {
		t.Fatalf("receipt verify exit code = %d, want 0; report:\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for _, line := range lines[:len(lines)-1] {
		mark, rest, _ := strings.Cut(line, " ")
		name, detail, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if mark != "ok" || name == "" || strings.TrimSpace(detail) == "" || strings.TrimSpace(line) != line {
			t.Errorf("check line %q: want \"ok <check> <detail>\" with a detail and no trailing space", line)
		}
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "receipt valid (context ") {
		t.Errorf("last line = %q, want the verdict", last)
	}
}

// TestReceiptVerifyCLIEmptyFile: an empty receipt, card or request file is
// named as empty, not reported as a JSON syntax error.
func TestReceiptVerifyCLIEmptyFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	req, _ := os.ReadFile(filepath.Join("testdata", "invoice-pass.json"))
	answer, _ := runCLI(t, string(req), "verify", "--data-dir", dir)
	receipt := filepath.Join(dir, "receipt.json")
	if err := os.WriteFile(receipt, answer, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"card", []string{"--card", empty, receipt}, "reading --card: the file " + empty + " is empty"},
		{"request", []string{"--data-dir", dir, "--request", empty, receipt}, "reading --request: the file " + empty + " is empty"},
		{"receipt", []string{"--data-dir", dir, empty}, "reading the receipt: the file " + empty + " is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"receipt", "verify"}, tt.args...), strings.NewReader(""), &stdout, &stderr, testEnv)
			if err == nil || err.Error() != tt.want {
				t.Errorf("receipt verify %v: error %v, want %q", tt.args, err, tt.want)
			}
		})
	}
}

// TestKeysShowWithoutKey: `verifier keys show` on a data dir without a key
// says there is none and how to make one, exits 1 and creates nothing.
func TestKeysShowWithoutKey(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, dataDir string)
	}{
		{"no data dir", func(*testing.T, string) {}},
		{"empty key folder", func(t *testing.T, dataDir string) {
			if err := os.MkdirAll(filepath.Join(dataDir, "keys"), 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dataDir := filepath.Join(t.TempDir(), "data")
			tt.setup(t, dataDir)
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"keys", "show", "--data-dir", dataDir}, nil, &stdout, &stderr, func(string) string { return "" })
			var ee exitError
			if !errors.As(err, &ee) || ee.code != 1 {
				t.Errorf("keys show = %v, want exit 1", err)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			if msg := stderr.String(); !strings.Contains(msg, "no signing key") || !strings.Contains(msg, "verifier keys rotate --data-dir "+dataDir) {
				t.Errorf("stderr = %q, want that there is no key and the command that makes one", msg)
			}
			keys, _ := os.ReadDir(filepath.Join(dataDir, "keys"))
			if len(keys) != 0 {
				t.Errorf("keys show created %d entries in the key folder", len(keys))
			}
			if _, err := os.Stat(dataDir); tt.name == "no data dir" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("keys show created the data dir (stat: %v)", err)
			}
		})
	}
}

// TestReceiptVerifyWithoutKey: `verifier receipt verify --data-dir` on a
// data dir without a key says where to find one, exits 2 and creates
// nothing (it used to make a key, then fail the signature against it).
func TestReceiptVerifyWithoutKey(t *testing.T) {
	signed := t.TempDir()
	req, _ := os.ReadFile(filepath.Join("testdata", "invoice-pass.json"))
	answer, _ := runCLI(t, string(req), "verify", "--data-dir", signed)
	receipt := filepath.Join(signed, "receipt.json")
	if err := os.WriteFile(receipt, answer, 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"receipt", "verify", "--data-dir", dataDir, receipt}, nil, &stdout, &stderr, func(string) string { return "" })
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Errorf("receipt verify = %v, want exit 2", err)
	}
	if msg := stderr.String(); !strings.Contains(msg, "no public key") || !strings.Contains(msg, "--card") {
		t.Errorf("stderr = %q, want that there is no key and where to get one", msg)
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("receipt verify created the data dir (stat: %v)", err)
	}
}
