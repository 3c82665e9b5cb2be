package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// fuzzBodies are seed request bodies: the repository's invoices and a few
// hostile shapes.
func fuzzBodies(tb testing.TB) []string {
	tb.Helper()
	var seeds []string
	for _, name := range []string{"invoice-pass.json", "invoice-fail.json"} {
		b, err := os.ReadFile(filepath.Join(testkit.SuitesDir, name))
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, string(b))
	}
	return append(seeds,
		`{"task_id":"t","expected_schema":{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}},"submitted_output":1}`,
		`{"task_id":"t","expected_schema":{"uniqueItems":true,"items":{"enum":[1,2,3]}},"submitted_output":[1,1.0,1e0]}`,
		`{"task_id":"t","expected_schema":{"pattern":"^(a+)+$"},"submitted_output":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}`,
		`{"task_id":"t","agent_id":null,"expected_schema":true,"submitted_output":null,"detail":"compact"}`,
		`{"task_id":"t","expected_schema":true,"submitted_output":{"a":"\ud83d\ude00","b":-0,"c":5e-324}}`,
		`{"task_id":"t","expected_schema":{"format":"regex"},"submitted_output":"(?<=x)"}`,
		`{}`, `[]`, `{"task_id":`, "",
	)
}

// FuzzServiceVerify runs Service.Verify, the typed core every transport
// shares, on any body: a signed verdict or an *Error of the one shape with
// a 4xx status (or 503), never a panic or an internal error.
func FuzzServiceVerify(f *testing.F) {
	for _, s := range fuzzBodies(f) {
		f.Add([]byte(s))
	}
	svc := testkit.QuietService(f, false)
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := svc.Verify(context.Background(), body)
		if err != nil {
			e := tools.AsError(err)
			if e.Status >= 500 && e.Status != http.StatusServiceUnavailable {
				t.Fatalf("status %d (%s) for %q: %v", e.Status, e.Code, body, err)
			}
			if e.Code == "" || e.Message == "" || len(e.NextActions) == 0 {
				t.Errorf("error not in the one shape: %+v", e)
			}
			return
		}
		var answer map[string]any
		if err := json.Unmarshal(v.Answer, &answer); err != nil {
			t.Fatalf("the answer is not JSON: %v", err)
		}
		if answer["attestation"] == nil || (answer["result"] != "pass" && answer["result"] != "fail") {
			t.Errorf("the answer is not a signed verdict: %.300s", v.Answer)
		}
	})
}

// FuzzHTTPHandler sends any method, path, content type and body to the
// whole HTTP handler (REST, discovery, docs and /mcp): never a panic, never
// a 5xx but the documented 503, and every error of the REST routes in the
// one JSON shape.
func FuzzHTTPHandler(f *testing.F) {
	for _, s := range fuzzBodies(f) {
		f.Add("POST", "/verify/schema", "application/json", []byte(s))
	}
	for _, p := range []string{"/health", "/score/seller-7", "/reputation/a%FF?limit=5&cursor=x", "/receipts/00000000-0000-4000-8000-000000000000",
		"/.well-known/agent-card.json", "/openapi.json", "/llms.txt", "/docs", "/docs/x.js", "/nope", "//verify//schema", "/verify/schema/.."} {
		f.Add("GET", p, "", []byte(nil))
	}
	f.Add("POST", "/mcp", "application/json", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"verify_schema","arguments":{"task_id":"t","expected_schema":true,"submitted_output":1}}}`))
	f.Add("POST", "/mcp", "application/json", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	f.Add("DELETE", "/mcp", "", []byte(nil))
	f.Add("PUT", "/verify/deliverable", "text/plain", []byte("x"))
	f.Add("OPTIONS", "*", "", []byte(nil))
	h, _ := corpusHandler(f)
	f.Fuzz(func(t *testing.T, method, path, contentType string, body []byte) {
		if !utf8.ValidString(path) || strings.ContainsAny(path, " \r\n\t\x00") || !strings.HasPrefix(path, "/") && path != "*" {
			return // not a request line a client could send
		}
		req, err := http.NewRequest(method, "http://verifier.test"+strings.TrimPrefix(path, "*"), bytes.NewReader(body))
		if err != nil {
			return // not a method or URL net/http would parse off the wire
		}
		if path == "*" {
			req.URL.Path = "*"
		}
		req.RemoteAddr = "192.0.2.1:1234"
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("%s %q (%s): status %d: %.300s", method, path, contentType, rec.Code, rec.Body.Bytes())
		}
		if rec.Code >= 400 && req.URL.Path != "/mcp" {
			var e tools.Error
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Code == "" || e.Status != rec.Code {
				t.Errorf("%s %q: status %d not in the one error shape (%s): %.300s", method, path, rec.Code, ct, rec.Body.Bytes())
			}
		}
	})
}
