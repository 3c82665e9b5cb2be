package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
	"github.com/verifier-dev/verifier/tools/mcpserver"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxRefusal bounds the whole answer (the JSON-RPC frame or HTTP body) to
// a request the server refuses: a fixed message, whatever was sent.
const maxRefusal = 1 << 10

// refusalCase is a request the server answers with a JSON-RPC error: what
// it sends (with marker in it), the error code it must get, and a valid
// choice the message must name.
type refusalCase struct {
	name, method, params string
	code                 float64
	names                string
	header               http.Header // extra HTTP headers
}

// refusalCases are the requests whose SDK errors quoted the caller.
func refusalCases() []refusalCase {
	huge := testkit.Marker + strings.Repeat("A", 1<<20)
	return []refusalCase{
		{name: "unknown tool", method: "tools/call", params: `{"name":"` + testkit.Marker + `","arguments":{}}`, code: jsonrpc.CodeInvalidParams, names: contract.Record},
		{name: "unknown prompt", method: "prompts/get", params: `{"name":"` + testkit.Marker + `"}`, code: jsonrpc.CodeInvalidParams, names: "no prompts"},
		{name: "unknown resource", method: "resources/read", params: `{"uri":"file:///` + testkit.Marker + `"}`, code: jsonrpc.CodeInvalidParams, names: "no resources"},
		{name: "string params", method: "tools/call", params: `"` + testkit.Marker + `"`, code: jsonrpc.CodeInvalidParams, names: contract.VerifyReceipt},
		{name: "params of the wrong type", method: "tools/call", params: `{"name":["` + testkit.Marker + `"]}`, code: jsonrpc.CodeInvalidParams, names: contract.VerifySchema},
		{name: "1 MiB tool name", method: "tools/call", params: `{"name":"` + huge + `","arguments":{}}`, code: jsonrpc.CodeInvalidParams, names: contract.VerifySchema},
		{name: "1 MiB prompt name", method: "prompts/get", params: `{"name":"` + huge + `"}`, code: jsonrpc.CodeInvalidParams, names: "no prompts"},
		{name: "bad cursor", method: "tools/list", params: `{"cursor":"` + testkit.Marker + `"}`, code: jsonrpc.CodeInvalidParams, names: contract.VerifySchema},
	}
}

// checkRefusal checks one answer: a JSON-RPC error of the wanted code whose
// message names the valid choice, and nothing of what was sent in a short
// answer.
func checkRefusal(t *testing.T, tt refusalCase, answer []byte) {
	t.Helper()
	if bytes.Contains(answer, []byte(testkit.Marker)) || bytes.Contains(answer, []byte("AAAAAAAA")) {
		t.Errorf("the answer echoes the request: %.300s", answer)
	}
	if len(answer) >= maxRefusal {
		t.Errorf("answer of %d bytes, want under %d: %.300s", len(answer), maxRefusal, answer)
	}
	var m struct {
		Error *struct {
			Code    float64         `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(answer, &m); err != nil || m.Error == nil {
		t.Fatalf("answer is not a JSON-RPC error (%v): %.300s", err, answer)
	}
	if m.Error.Code != tt.code {
		t.Errorf("code %v, want %v: %s", m.Error.Code, tt.code, answer)
	}
	if !strings.Contains(m.Error.Message, tt.names) {
		t.Errorf("message %q does not name %q", m.Error.Message, tt.names)
	}
}

// TestMCPStdioRefusalsEchoNothing: over stdio, a request naming what the
// server does not have, or whose params it cannot read, gets an error that
// names the valid choices and quotes nothing of the request.
func TestMCPStdioRefusalsEchoNothing(t *testing.T) {
	s := testkit.StartStdioSession(t, mcpserver.ServeStdio, testkit.QuietService(t, true))
	cases := append(refusalCases(),
		refusalCase{name: "unknown method", method: testkit.Marker + "/list", params: `{}`, code: jsonrpc.CodeMethodNotFound, names: "tools/call"},
		refusalCase{name: "1 MiB method", method: testkit.Marker + strings.Repeat("A", 1<<20), params: `{}`, code: jsonrpc.CodeMethodNotFound, names: "tools/call"},
	)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			m := s.Request(t, tt.method, tt.params)
			answer, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			checkRefusal(t, tt, answer)
			s.Alive(t)
		})
	}
}

// TestMCPHTTPRefusalsEchoNothing is TestMCPStdioRefusalsEchoNothing over
// streamable HTTP, where the SDK answers an unknown method itself (HTTP
// 400, or 404 under protocol 2026-07-28).
func TestMCPHTTPRefusalsEchoNothing(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	v2026 := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}
	cases := append(refusalCases(),
		refusalCase{name: "unknown method", method: testkit.Marker + "/list", params: `{}`, code: jsonrpc.CodeInvalidRequest, names: "tools/call"},
		refusalCase{name: "unknown method, protocol 2026-07-28", method: testkit.Marker + "/list", params: `{}`, code: jsonrpc.CodeMethodNotFound, names: "tools/call", header: v2026},
		refusalCase{name: "1 MiB method, protocol 2026-07-28", method: testkit.Marker + strings.Repeat("A", 1<<20), params: `{}`, code: jsonrpc.CodeMethodNotFound, names: "tools/call", header: v2026},
	)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			method, _ := json.Marshal(tt.method)
			body := `{"jsonrpc":"2.0","id":1,"method":` + string(method) + `,"params":` + tt.params + `}`
			header := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
			for k, v := range tt.header {
				header[k] = v
			}
			resp, answer := f.do(t, http.MethodPost, "/mcp", strings.NewReader(body), header)
			if resp.StatusCode >= 500 {
				t.Errorf("status %d", resp.StatusCode)
			}
			checkRefusal(t, tt, answer)
		})
	}
}
