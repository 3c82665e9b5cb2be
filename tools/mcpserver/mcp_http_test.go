package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// postMCP posts body to the MCP endpoint at url with the given extra
// headers and returns the status and body.
func postMCP(t *testing.T, url, body string, header map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// rpcAnswer is one JSON-RPC answer with its id kept raw.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeAnswer(t *testing.T, raw []byte) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("not a JSON-RPC answer: %v: %.300s", err, raw)
	}
	return a
}

// TestMCPHTTPBatchBounded: a batch over HTTP is bounded — the issue's
// many tools/list in one body (20,000 made a 525 MB answer) are refused
// before anything runs; MCP 2025-06-18 and later refuse every batch; a
// short batch is answered in full.
func TestMCPHTTPBatchBounded(t *testing.T) {
	svc := testkit.QuietService(t, true)
	ts := httptest.NewServer(NewMCPHandler(svc))
	defer ts.Close()
	list := func(i int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i) }

	status, body := postMCP(t, ts.URL, "["+testkit.JoinN(2000, list)+"]", nil)
	if status != http.StatusBadRequest || len(body) > 1024 {
		t.Fatalf("2,000 tools/list in a batch: status %d, %d bytes; want a 400 under 1 KB", status, len(body))
	}
	if a := decodeAnswer(t, body); a.Error == nil || a.Error.Code != rpcInvalidRequest || !strings.Contains(a.Error.Message, "at most 16 messages") {
		t.Errorf("answer %s, want Invalid Request naming the bound", body)
	}

	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		status, body = postMCP(t, ts.URL, "["+list(1)+"]", map[string]string{"Mcp-Protocol-Version": version})
		if a := decodeAnswer(t, body); status != http.StatusBadRequest || a.Error == nil || !strings.Contains(a.Error.Message, "batches were removed") {
			t.Errorf("a batch at %s: status %d %s, want 400 saying batches were removed", version, status, body)
		}
	}

	for _, header := range []map[string]string{nil, {"Mcp-Protocol-Version": "2025-03-26"}} {
		batch := "[" + testkit.JoinN(MaxBatchMessages-1, func(i int) string { return list(i + 1) }) +
			`,{"jsonrpc":"2.0","method":"notifications/initialized"}]`
		status, body = postMCP(t, ts.URL, batch, header)
		var answers []rpcAnswer
		if err := json.Unmarshal(body, &answers); status != http.StatusOK || err != nil {
			t.Fatalf("a batch of %d (header %v): status %d, %v: %.300s", MaxBatchMessages, header, status, err, body)
		}
		if len(answers) != MaxBatchMessages-1 {
			t.Errorf("%d answers, want one per request (%d)", len(answers), MaxBatchMessages-1)
		}
		for i, a := range answers {
			if string(a.ID) != fmt.Sprint(i+1) || a.Result == nil {
				t.Errorf("answer %d: id %s, error %v; want the result of request %d", i, a.ID, a.Error, i+1)
			}
		}
	}

	status, body = postMCP(t, ts.URL, `[]`, nil)
	if a := decodeAnswer(t, body); status != http.StatusBadRequest || a.Error == nil || !strings.Contains(a.Error.Message, "empty") {
		t.Errorf("an empty batch: %d %s", status, body)
	}
	status, body = postMCP(t, ts.URL, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, nil)
	if status != http.StatusAccepted || len(body) != 0 {
		t.Errorf("a batch of notifications: %d %q, want 202 and no body", status, body)
	}
}

// TestMCPHTTPBatchAnswerBytes: once a batch's answers reach the byte
// bound, the requests left are answered "not run", with their ids, and
// are not run.
func TestMCPHTTPBatchAnswerBytes(t *testing.T) {
	svc := testkit.QuietService(t, true)
	srv := NewMCPServer(svc)
	var runs atomic.Int32
	srv.AddTool(&mcp.Tool{Name: "count", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			runs.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 1000)}}}, nil
		})
	ts := httptest.NewServer(mcpHTTPHandlerBatch(srv, svc.Logger(), MaxBatchMessages, 2500))
	defer ts.Close()
	call := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":"c%d","method":"tools/call","params":{"name":"count","arguments":{}}}`, i)
	}
	status, body := postMCP(t, ts.URL, "["+testkit.JoinN(6, call)+"]", nil)
	var answers []rpcAnswer
	if err := json.Unmarshal(body, &answers); status != http.StatusOK || err != nil || len(answers) != 6 {
		t.Fatalf("status %d, %v, %d answers; want 200 and 6: %.300s", status, err, len(answers), body)
	}
	if got := runs.Load(); got != 3 {
		t.Errorf("%d calls ran, want 3 (each answer is about 1 KB; the bound 2,500 bytes is passed by the third)", got)
	}
	for i, a := range answers {
		if want := fmt.Sprintf(`"c%d"`, i); string(a.ID) != want {
			t.Errorf("answer %d has id %s, want %s", i, a.ID, want)
		}
		ran := i < 3
		if ran != (a.Result != nil) || !ran && (a.Error == nil || a.Error.Code != rpcNotRun || !strings.HasPrefix(a.Error.Message, "Not run")) {
			t.Errorf("answer %d: %s; want ran=%v", i, body, ran)
		}
	}
}

// TestMCPHTTPAcceptNamed: a POST whose Accept lacks one of the two media
// types is refused naming the header.
func TestMCPHTTPAcceptNamed(t *testing.T) {
	ts := httptest.NewServer(NewMCPHandler(testkit.QuietService(t, true)))
	defer ts.Close()
	for _, accept := range []string{"application/json", "text/event-stream", "text/html", "application/xml, text/plain"} {
		status, body := postMCP(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Accept": accept})
		a := decodeAnswer(t, body)
		if status != http.StatusBadRequest || a.Error == nil || !strings.Contains(a.Error.Message, "Accept header") ||
			!strings.Contains(a.Error.Message, "application/json, text/event-stream") {
			t.Errorf("Accept %q: %d %s; want a 400 naming the Accept header", accept, status, body)
		}
	}
	for _, accept := range []string{"*/*", "application/json, text/event-stream", "application/*;q=0.9, text/*"} {
		if status, body := postMCP(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Accept": accept}); status != http.StatusOK {
			t.Errorf("Accept %q: %d %s, want 200", accept, status, body)
		}
	}
}

// envelopeCases are messages whose id or keys the answer must not change:
// wantID is the id the answer carries, raw ("" for a refusal with a null
// id and an Invalid Request naming the problem in refusal).
var envelopeCases = []struct {
	name, frame, wantID, refusal string
}{
	{"id 10^30", `{"jsonrpc":"2.0","id":1000000000000000000000000000000,"method":"ping"}`, "", `"id"`},
	{"id 1e30", `{"jsonrpc":"2.0","id":1e30,"method":"ping"}`, "", `"id"`},
	{"id 1.5", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "", `"id"`},
	{"id 1.0", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, "", `"id"`},
	{"id 2^53+1", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, "", `"id"`},
	{"id -0", `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, "", `"id"`},
	{"id true", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, "", `"id"`},
	{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "", `"id"`},
	{"id 2^53-1", `{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`, "9007199254740991", ""},
	{"id negative", `{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`, "-9007199254740991", ""},
	{"id string", `{"jsonrpc":"2.0","id":"1e30","method":"ping"}`, `"1e30"`, ""},
	{"id invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"ping\"}", "", `"id"`},
	{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, "", "duplicate key"},
	{"duplicate method", `{"jsonrpc":"2.0","id":3,"method":"tools/call","method":"ping"}`, "", "duplicate key"},
	{"duplicate jsonrpc", `{"jsonrpc":"2.0","jsonrpc":"2.0","id":3,"method":"ping"}`, "", "duplicate key"},
	{"duplicate tool name", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"verify_schema","name":"get_verification_record","arguments":{"agent_id":"a"}}}`, "", "duplicate key"},
	{"duplicate in _meta", `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"x402/payment":{"a":1,"a":2}}}}`, "", "duplicate key"},
	{"duplicate params", `{"jsonrpc":"2.0","id":6,"method":"ping","params":{},"params":{}}`, "", "duplicate key"},
}

// checkEnvelopeAnswer checks the answer to one of envelopeCases.
func checkEnvelopeAnswer(t *testing.T, name, wantID, refusal string, raw []byte) {
	t.Helper()
	a := decodeAnswer(t, raw)
	if refusal == "" {
		if string(a.ID) != wantID || a.Error != nil {
			t.Errorf("%s: answer %s, want a result with id %s exactly", name, raw, wantID)
		}
		return
	}
	if string(a.ID) != "null" || a.Error == nil || a.Error.Code != rpcInvalidRequest || !strings.Contains(a.Error.Message, refusal) {
		t.Errorf("%s: answer %s, want an Invalid Request with a null id about %s", name, raw, refusal)
	}
}

// TestMCPHTTPEnvelope: over HTTP, ids come back exactly as sent or are
// refused, and a duplicate key in the envelope is refused.
func TestMCPHTTPEnvelope(t *testing.T) {
	ts := httptest.NewServer(NewMCPHandler(testkit.QuietService(t, true)))
	defer ts.Close()
	for _, tt := range envelopeCases {
		_, body := postMCP(t, ts.URL, tt.frame, nil)
		checkEnvelopeAnswer(t, tt.name, tt.wantID, tt.refusal, body)
	}
	// Duplicate tool arguments stay the tool's 422, naming the field.
	_, body := postMCP(t, ts.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_verification_record","arguments":{"agent_id":"a","agent_id":"b"}}}`, nil)
	if a := decodeAnswer(t, body); !bytes.Contains(a.Result, []byte(`"isError":true`)) || !bytes.Contains(a.Result, []byte("duplicate key")) {
		t.Errorf("duplicate arguments: %s, want the tool's isError result", body)
	}
}

// rawStdio is ServeStdio on pipes with its output read line by line, raw.
type rawStdio struct {
	in  *io.PipeWriter
	out *bufio.Reader
}

func startRawStdio(t *testing.T, serve func(io.Reader, io.Writer) error) *rawStdio {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second * testkit.RaceSlowdown):
			t.Error("ServeStdio did not return after its input closed")
		}
	})
	s := &rawStdio{in: inW, out: bufio.NewReader(outR)}
	s.call(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if _, err := inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	return s
}

// call writes one frame and returns the next output line.
func (s *rawStdio) call(t *testing.T, frame string) []byte {
	t.Helper()
	if _, err := s.in.Write([]byte(frame + "\n")); err != nil {
		t.Fatal(err)
	}
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return line
}

// TestMCPStdioEnvelope: over stdio too, ids come back exactly as sent or
// are refused, and a duplicate key in the envelope is refused.
func TestMCPStdioEnvelope(t *testing.T) {
	svc := testkit.QuietService(t, true)
	s := startRawStdio(t, func(in io.Reader, out io.Writer) error { return ServeStdio(context.Background(), svc, in, out) })
	for _, tt := range envelopeCases {
		checkEnvelopeAnswer(t, tt.name, tt.wantID, tt.refusal, s.call(t, tt.frame))
	}
}

// setLevelCases are logging/setLevel params: valid says the level is one
// of the MCP enum.
var setLevelCases = []struct {
	name, params string
	valid        bool
}{
	{"huge", `{"level":"` + testkit.Marker + strings.Repeat("A", 1<<20) + `"}`, false},
	{"unknown", `{"level":"` + testkit.Marker + `"}`, false},
	{"upper case", `{"level":"DEBUG"}`, false},
	{"empty", `{"level":""}`, false},
	{"missing", `{}`, false},
	{"debug", `{"level":"debug"}`, true},
	{"emergency", `{"level":"emergency"}`, true},
}

// checkSetLevel checks the answer to a setLevel case and that the log
// holds nothing the caller wrote.
func checkSetLevel(t *testing.T, name string, valid bool, raw []byte, logs *testkit.SyncBuffer) {
	t.Helper()
	a := decodeAnswer(t, raw)
	if valid {
		if a.Error != nil {
			t.Errorf("%s: %s, want a result", name, raw)
		}
		return
	}
	if a.Error == nil || a.Error.Code != -32602 || a.Error.Message != msgInvalidLevel || len(raw) > 1024 {
		t.Errorf("%s: %.300s, want the invalid-params error listing the levels", name, raw)
	}
	if strings.Contains(logs.String(), testkit.Marker) || strings.Contains(logs.String(), "AAAA") {
		t.Errorf("%s: the log holds the level sent: %.300s", name, logs.String())
	}
}

// TestMCPSetLevelValidated: logging/setLevel takes only the MCP levels,
// over stdio and HTTP; any other is an invalid-params error that quotes
// nothing, and nothing of it is logged.
func TestMCPSetLevelValidated(t *testing.T) {
	logs := &testkit.SyncBuffer{}
	svc := testkit.QuietService(t, true)
	svc.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := startRawStdio(t, func(in io.Reader, out io.Writer) error { return ServeStdio(context.Background(), svc, in, out) })
	ts := httptest.NewServer(NewMCPHandler(svc))
	defer ts.Close()
	for i, tt := range setLevelCases {
		frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"logging/setLevel","params":%s}`, i+1, tt.params)
		checkSetLevel(t, "stdio "+tt.name, tt.valid, s.call(t, frame), logs)
		_, body := postMCP(t, ts.URL, frame, nil)
		checkSetLevel(t, "http "+tt.name, tt.valid, body, logs)
	}
}
