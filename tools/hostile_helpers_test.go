package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// suitesDir is the repository's top-level testdata/ folder, which holds the
// vendored external test corpora (JSONTestSuite, the naughty strings, the
// request-hash vectors), each with its SOURCE note.
var suitesDir = filepath.Join("..", "testdata")

// hostileBound is how much CPU time any one hostile request may take: 2 s
// for bodies up to the 4 MiB limit (raceSlowdown times that under the race
// detector). It is CPU time, not wall time, because the machine is shared;
// a request that blocks instead is caught by hangBound.
const hostileBound = 2 * time.Second * raceSlowdown

// hangBound is the wall time after which a hostile request counts as hung.
const hangBound = 5 * hostileBound

// cpuNow is this process's user and system CPU time.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serveRaw sends one request straight to the handler (no network) and
// returns the recorded response.
func serveRaw(h http.Handler, method, path, contentType string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// verifyBody is a verification request whose schema and output are raw JSON
// text, sent as written. extra holds more raw members by name.
func verifyBody(schema, output string, extra ...string) []byte {
	var b strings.Builder
	b.WriteString(`{"task_id":"hostile","expected_schema":`)
	b.WriteString(schema)
	b.WriteString(`,"submitted_output":`)
	b.WriteString(output)
	for i := 0; i+1 < len(extra); i += 2 {
		fmt.Fprintf(&b, ",%q:%s", extra[i], extra[i+1])
	}
	b.WriteString("}")
	return []byte(b.String())
}

// outcome is what a verify call answered, in the terms of the hardening
// contract: a verdict, or an error of the one shape.
type outcome struct {
	status int
	result string // "pass" or "fail" for a verdict
	code   string // the error code otherwise
	fields []string
	body   []byte
}

// classify checks that a verify response is a signed verdict (200) or an
// error in the one shape with a status below 500 (503 unavailable is
// allowed only when allow503), and that no planted string longer than a
// few characters comes back in an error.
func classify(t testing.TB, status int, header http.Header, body []byte, allow503 bool, planted ...string) outcome {
	t.Helper()
	o := outcome{status: status, body: body}
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json (status %d)", ct, status)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("status %d: body is not a JSON object: %v\n%.300s", status, err, body)
	}
	if status == http.StatusOK {
		o.result, _ = m["result"].(string)
		if o.result != "pass" && o.result != "fail" {
			t.Errorf("200 without a verdict: %.300s", body)
		}
		if _, ok := m["attestation"]; !ok {
			t.Errorf("verdict without an attestation: %.300s", body)
		}
		return o
	}
	o.code, _ = m["code"].(string)
	if st, _ := m["status"].(float64); int(st) != status || o.code == "" {
		t.Errorf("status %d: not the one error shape: %.300s", status, body)
	}
	if status >= 500 && !(allow503 && status == http.StatusServiceUnavailable && o.code == CodeUnavailable) {
		t.Errorf("status %d (%s): a hostile input must get a verdict or a 4xx: %.300s", status, o.code, body)
	}
	if fs, ok := m["fields"].([]any); ok {
		for _, f := range fs {
			if fm, ok := f.(map[string]any); ok {
				name, _ := fm["field"].(string)
				o.fields = append(o.fields, name)
			}
		}
	}
	for _, p := range planted {
		if echoes(body, p) {
			t.Errorf("the error echoes the input %q: %.400s", p, body)
		}
	}
	return o
}

// echoes reports whether body contains s, raw or JSON-escaped, when s is
// long and distinctive enough that an accidental match is implausible:
// more than four bytes and not a word every error contains anyway.
func echoes(body []byte, s string) bool {
	if len(s) <= 4 || slices.Contains(errorVocabulary, strings.ToLower(strings.TrimSpace(s))) {
		return false
	}
	if bytes.Contains(body, []byte(s)) {
		return true
	}
	esc, err := json.Marshal(s)
	if err != nil {
		return false
	}
	return bytes.Contains(body, esc[1:len(esc)-1])
}

// errorVocabulary are strings an error may legitimately contain whatever
// was sent (field names, words of the messages, rule types).
var errorVocabulary = []string{
	"undefined", "false", "true", "null", "object", "array", "number", "string", "integer", "boolean",
	"field", "fields", "value", "values", "equals", "tolerance", "task_id", "agent_id", "bounds", "rules",
	"detail", "expected_schema", "submitted_output", "unique", "type", "schema", "request", "the request",
	"charged", "status", "message", "retryable", "invalid", "body", "limit", "other_field", "equals_field",
	"in_field", "if_present", "sum_equals", "exists_in", "fix_request_fields", "next_actions", "problem",
}

// fanOutSchema applies leaf 2^k times to the same value through nested
// allOf references: a few nodes, exponential work.
func fanOutSchema(k int, leaf string) string {
	defs := joinN(k, func(i int) string {
		return fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1)
	})
	return fmt.Sprintf(`{"$defs":{%s,"d%d":%s},"$ref":"#/$defs/d0"}`, defs, k, leaf)
}
