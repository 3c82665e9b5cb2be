package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// suitesDir holds the vendored external test corpora (JSONTestSuite, the
// naughty strings), each with its licence and SOURCE note.
var suitesDir = "testdata"

// runVerifyCLI runs `verifier verify` on stdin and returns its one output
// line (decoded) and exit code; a Go error other than an exit code fails
// the test.
func runVerifyCLI(t *testing.T, dataDir string, stdin []byte) (map[string]any, []byte, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"verify", "--data-dir", dataDir}, bytes.NewReader(stdin), &stdout, &stderr, testEnv)
	code := 0
	var ee exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		t.Fatalf("verify: %v (stderr %s)", err, stderr.String())
	}
	line := bytes.TrimSpace(stdout.Bytes())
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("verify printed no JSON object (exit %d): %v\n%.300s", code, err, line)
	}
	return m, line, code
}

// TestCLIJSONTestSuite runs `verifier verify` on every JSONTestSuite file,
// as the request itself and embedded as submitted_output: exit 2 with an
// invalid_request error for every n_ file and every raw file (none is a
// request), exit 0 or 1 with a verdict or 2 for y_ and i_ files embedded;
// never another error, and no error quotes the file.
func TestCLIJSONTestSuite(t *testing.T) {
	dir := filepath.Join(suitesDir, "jsontestsuite", "test_parsing")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading the JSONTestSuite: %v", err)
	}
	if len(entries) < 300 {
		t.Fatalf("found %d JSONTestSuite files, want the whole suite (318)", len(entries))
	}
	dataDir := t.TempDir()
	verdicts := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(e.Name(), func(t *testing.T) {
			checkInvalid := func(how string, m map[string]any, line []byte) {
				t.Helper()
				if m["code"] != "invalid_request" || m["status"] != float64(422) {
					t.Errorf("%s: error %s, want invalid_request 422", how, line)
				}
				if s := strings.TrimSpace(string(data)); len(s) > 5 && bytes.Contains(line, []byte(s)) { // "false" is in every error
					t.Errorf("%s: the error quotes the file: %s", how, line)
				}
			}
			m, line, code := runVerifyCLI(t, dataDir, data)
			if code != 2 {
				t.Errorf("raw: exit %d, want 2: %.300s", code, line)
			}
			checkInvalid("raw", m, line)
			body := append(append([]byte(`{"task_id":"jsontestsuite","expected_schema":true,"submitted_output":`), data...), '}')
			m, line, code = runVerifyCLI(t, dataDir, body)
			switch {
			case code == 2:
				checkInvalid("embedded", m, line)
			case e.Name()[0] == 'n':
				t.Errorf("embedded n_ file: exit %d, want 2: %.300s", code, line)
			case code == 0 || code == 1:
				if m["attestation"] == nil {
					t.Errorf("embedded: exit %d without a signed answer: %.300s", code, line)
				}
				verdicts++
			default:
				t.Errorf("embedded: exit %d: %.300s", code, line)
			}
		})
	}
	if verdicts < 90 {
		t.Errorf("only %d files got a verdict; every y_ file but the I-JSON violations should", verdicts)
	}
}

// TestCLINaughtyStrings runs `verifier verify --jsonl` on one request per
// naughty string, planted in the task id, a key and a value of the output,
// a rule's field and a schema pattern: one answer line per request, each a
// signed verdict or an invalid_request error that does not quote it.
func TestCLINaughtyStrings(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(suitesDir, "naughty-strings", "blns.json"))
	if err != nil {
		t.Fatalf("reading the naughty strings: %v", err)
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil || len(list) < 500 {
		t.Fatalf("naughty strings: %d, %v; want the whole list (515)", len(list), err)
	}
	dataDir := t.TempDir()
	for _, p := range []struct {
		field string
		body  func(q string) string
	}{
		{"task_id", func(q string) string { return `{"task_id":` + q + `,"expected_schema":true,"submitted_output":1}` }},
		{"output key", func(q string) string {
			return `{"task_id":"t","expected_schema":{"type":"object"},"submitted_output":{` + q + `:1},"strict_content_check":true}`
		}},
		{"output value", func(q string) string {
			return `{"task_id":"t","expected_schema":{"properties":{"a":{"type":"integer"}}},"submitted_output":{"a":` + q + `}}`
		}},
		{"rule field", func(q string) string {
			return `{"task_id":"t","expected_schema":true,"submitted_output":{"a":[1]},"rules":[{"type":"unique","field":` + q + `}]}`
		}},
		{"schema pattern", func(q string) string {
			return `{"task_id":"t","expected_schema":{"pattern":` + q + `},"submitted_output":"x"}`
		}},
	} {
		t.Run(p.field, func(t *testing.T) {
			var in bytes.Buffer
			for _, s := range list {
				q, _ := json.Marshal(s)
				in.WriteString(p.body(string(q)) + "\n")
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"verify", "--jsonl", "--data-dir", dataDir}, &in, &stdout, &stderr, testEnv)
			var ee exitError
			if err != nil && (!errors.As(err, &ee) || ee.code > 2) {
				t.Fatalf("verify --jsonl: %v (stderr %s)", err, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			if len(lines) != len(list) {
				t.Fatalf("%d answer lines for %d requests", len(lines), len(list))
			}
			for i, line := range lines {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("line %d is not JSON: %v", i, err)
				}
				if m["attestation"] != nil {
					continue
				}
				if m["code"] != "invalid_request" {
					t.Errorf("string #%d: %.300s, want a verdict or invalid_request", i, line)
				}
				q, _ := json.Marshal(list[i])
				if s := list[i]; len(s) > 5 && (strings.Contains(line, s) || strings.Contains(line, string(q[1:len(q)-1]))) {
					t.Errorf("string #%d %q is quoted by the error: %.300s", i, s, line)
				}
			}
		})
	}
}

// TestCLINestedTooDeeply: `verifier verify` reports 100,000-deep nesting, in
// the output or as the body, as nested too deeply with the limit (it was
// "not valid JSON"), with exit 2.
func TestCLINestedTooDeeply(t *testing.T) {
	const deep = 100_000
	objects := strings.Repeat(`{"a":`, deep) + "1" + strings.Repeat("}", deep)
	request := func(output string) []byte {
		return []byte(`{"task_id":"deep","expected_schema":{},"submitted_output":` + output + `}`)
	}
	dataDir := t.TempDir()
	for _, tt := range []struct {
		name        string
		body        []byte
		field, want string
	}{
		{"array output", request(strings.Repeat("[", deep) + strings.Repeat("]", deep)), "submitted_output", "is nested too deeply: the limit is 127 levels"},
		{"object output", request(objects), "submitted_output", "is nested too deeply: the limit is 127 levels"},
		{"object body", []byte(objects), "a", "is nested too deeply: the limit is 127 levels"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, line, code := runVerifyCLI(t, dataDir, tt.body)
			fields, _ := m["fields"].([]any)
			if code != 2 || m["code"] != "invalid_request" || len(fields) != 1 {
				t.Fatalf("exit %d: %.300s; want 2 and an invalid_request of one problem", code, line)
			}
			if f, _ := fields[0].(map[string]any); f["field"] != tt.field || f["problem"] != tt.want {
				t.Errorf("problem %v, want %s %q", f, tt.field, tt.want)
			}
		})
	}
}
