package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// TestMCPHTTPMalformed checks that what the SDK refuses over HTTP comes back
// as a JSON-RPC error of a fixed message (the SDK's own text quoted the
// body), never a 5xx.
func TestMCPHTTPMalformed(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	for _, tt := range []struct {
		name, body string
		accept     string
		refused    bool // a 4xx JSON-RPC error; else the SDK may answer
	}{
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + testkit.Marker + `"`, "", true},
		// The SDK reads one JSON value and ignores what follows; the
		// tool arguments are still checked whole by the engine.
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + testkit.Marker, "", false},
		{"wrong version", `{"jsonrpc":"` + testkit.Marker + `","id":1,"method":"ping"}`, "", true},
		{"not an object", `"` + testkit.Marker + `"`, "", true},
		{"no accept", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + testkit.Marker + `"}}`, "text/html", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			accept := tt.accept
			if accept == "" {
				accept = "application/json, text/event-stream"
			}
			resp, body := f.do(t, http.MethodPost, "/mcp", strings.NewReader(tt.body),
				http.Header{"Content-Type": {"application/json"}, "Accept": {accept}})
			if resp.StatusCode >= 500 || tt.refused && resp.StatusCode < 400 {
				t.Errorf("status %d, want a 4xx (refused %v): %s", resp.StatusCode, tt.refused, body)
			}
			if bytes.Contains(body, []byte(testkit.Marker)) {
				t.Errorf("the answer echoes the request: %s", body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json: %s", ct, body)
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil || tt.refused && m["error"] == nil {
				t.Errorf("body is not a JSON-RPC error: %s", body)
			}
		})
	}
}

// TestMCPHTTPBatchThroughHandler: the batch bounds hold through the whole
// HTTP handler (its body limit and deadline in front of the MCP
// endpoint): the many tools/list in one body are a small 400,
// nothing run; a short batch is answered with one result per request.
func TestMCPHTTPBatchThroughHandler(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	header := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	list := func(i int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i) }
	resp, body := f.do(t, http.MethodPost, "/mcp", strings.NewReader("["+testkit.JoinN(20000, list)+"]"), header)
	if resp.StatusCode != http.StatusBadRequest || len(body) > 1024 || !bytes.Contains(body, []byte("at most 16 messages")) {
		t.Errorf("20,000 tools/list in a batch: status %d, %d bytes: %.300s; want a 400 under 1 KB naming the bound", resp.StatusCode, len(body), body)
	}
	resp, body = f.do(t, http.MethodPost, "/mcp", strings.NewReader("["+list(1)+","+list(2)+"]"), header)
	var answers []struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &answers); resp.StatusCode != http.StatusOK || err != nil || len(answers) != 2 ||
		string(answers[0].ID) != "1" || string(answers[1].ID) != "2" || answers[0].Result == nil || answers[1].Result == nil {
		t.Errorf("a batch of two tools/list: status %d, %v: %.300s", resp.StatusCode, err, body)
	}
}
