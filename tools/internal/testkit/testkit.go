// Package testkit holds the test helpers that the tests of tools, its
// adapters (tools/mcpserver, tools/rest) share: a service on temporary keys
// and store, the repository's testdata, an in-process MCP client, a stdio
// session, the hostile-input classifier, CPU and heap clocks, a fake
// facilitator. It is imported by tests only.
package testkit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/tools"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// NewTestService builds a Service on a temp key store and, when withStore,
// a temp bbolt store.
func NewTestService(t testing.TB, withStore bool) *tools.Service {
	t.Helper()
	keys, err := signing.OpenKeyStore(filepath.Join(t.TempDir(), "keys"), nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := &tools.Service{Engine: engine.New(nil), Keys: keys, Version: "test"}
	if withStore {
		st, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		svc.Store = st
	}
	return svc
}

// ReadTestdata reads a file of the repository's testdata/ folder.
func ReadTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(SuitesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// WithDetail is body with its detail member set to detail.
func WithDetail(t testing.TB, body []byte, detail string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["detail"], _ = json.Marshal(detail)
	out, _ := json.Marshal(m)
	return out
}

// CPUClock is the process's CPU time at the start of a benchmark loop.
type CPUClock struct {
	start time.Duration
	ok    bool
}

// StartCPU reads the process's CPU time for a benchmark loop.
func StartCPU() CPUClock {
	d, ok := ProcessCPU()
	return CPUClock{d, ok}
}

// Report adds cpu-ns/op and returns it; 0 where there is no /proc.
func (c CPUClock) Report(b *testing.B) float64 {
	end, ok := ProcessCPU()
	if !c.ok || !ok || b.N == 0 {
		return 0
	}
	perOp := float64(end-c.start) / float64(b.N)
	b.ReportMetric(perOp, "cpu-ns/op")
	return perOp
}

// ProcessCPU reads the user and system time of every thread of this
// process from /proc/self/stat (Linux; clock ticks of 1/100 s).
func ProcessCPU() (time.Duration, bool) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is the first, utime the 12th, stime the 13th.
	_, rest, ok := bytes.Cut(stat, []byte(") "))
	fields := strings.Fields(string(rest))
	if !ok || len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on every Linux port
	return time.Duration(utime+stime) * tick, true
}

// SuitesDir is the repository's top-level testdata/ folder, which holds the
// vendored external test corpora (JSONTestSuite, the naughty strings, the
// request-hash vectors), each with its SOURCE note.
var SuitesDir = repoTestdata()

// CPUNow is this process's user and system CPU time.
func CPUNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ServeRaw sends one request straight to the handler (no network) and
// returns the recorded response.
func ServeRaw(h http.Handler, method, path, contentType string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// VerifyBody is a verification request whose schema and output are raw JSON
// text, sent as written. extra holds more raw members by name.
func VerifyBody(schema, output string, extra ...string) []byte {
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
	Status int
	Result string // "pass" or "fail" for a verdict
	Code   string // the error code otherwise
	Fields []string
	Body   []byte
}

// Classify checks that a verify response is a signed verdict (200) or an
// error in the one shape with a status below 500 (503 unavailable is
// allowed only when allow503), and that no planted string longer than a
// few characters comes back in an error.
func Classify(t testing.TB, status int, header http.Header, body []byte, allow503 bool, planted ...string) outcome {
	t.Helper()
	o := outcome{Status: status, Body: body}
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json (status %d)", ct, status)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("status %d: body is not a JSON object: %v\n%.300s", status, err, body)
	}
	if status == http.StatusOK {
		o.Result, _ = m["result"].(string)
		if o.Result != "pass" && o.Result != "fail" {
			t.Errorf("200 without a verdict: %.300s", body)
		}
		if _, ok := m["attestation"]; !ok {
			t.Errorf("verdict without an attestation: %.300s", body)
		}
		return o
	}
	o.Code, _ = m["code"].(string)
	if st, _ := m["status"].(float64); int(st) != status || o.Code == "" {
		t.Errorf("status %d: not the one error shape: %.300s", status, body)
	}
	if status >= 500 && !(allow503 && status == http.StatusServiceUnavailable && o.Code == tools.CodeUnavailable) {
		t.Errorf("status %d (%s): a hostile input must get a verdict or a 4xx: %.300s", status, o.Code, body)
	}
	if fs, ok := m["fields"].([]any); ok {
		for _, f := range fs {
			if fm, ok := f.(map[string]any); ok {
				name, _ := fm["field"].(string)
				o.Fields = append(o.Fields, name)
			}
		}
	}
	for _, p := range planted {
		if Echoes(body, p) {
			t.Errorf("the error echoes the input %q: %.400s", p, body)
		}
	}
	return o
}

// Echoes reports whether body contains s, raw or JSON-escaped, when s is
// long and distinctive enough that an accidental match is implausible:
// more than four bytes and not a word every error contains anyway.
func Echoes(body []byte, s string) bool {
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

// FanOutSchema applies leaf 2^k times to the same value through nested
// allOf references: a few nodes, exponential work.
func FanOutSchema(k int, leaf string) string {
	defs := JoinN(k, func(i int) string {
		return fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1)
	})
	return fmt.Sprintf(`{"$defs":{%s,"d%d":%s},"$ref":"#/$defs/d0"}`, defs, k, leaf)
}

// HostileBound is how much CPU time any one hostile request may take: 2 s
// for bodies up to the 4 MiB limit (RaceSlowdown times that under the race
// detector). It is CPU time, not wall time, because the machine is shared;
// a request that blocks instead is caught by HangBound.
const HostileBound = 2 * time.Second * RaceSlowdown

// HangBound is the wall time after which a hostile request counts as hung.
const HangBound = 5 * HostileBound

// update is the -update flag (see Update).
var update = updateFlag()

// updateFlag registers -update, or takes the flag of that name that a
// package under test registered first (an older tools package, in
// scripts/bench.sh's BASE runs).
func updateFlag() flag.Value {
	if f := flag.Lookup("update"); f != nil {
		return f.Value
	}
	flag.Bool("update", false, "rewrite the golden files under testdata/")
	return flag.Lookup("update").Value
}

// Update reports the -update flag: rewrite the golden files under
// testdata/ instead of comparing with them.
func Update() bool { return update.(flag.Getter).Get().(bool) }

// CheckGolden compares got with the golden file at path, which -update
// rewrites with got first.
func CheckGolden(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(golden), string(got)); diff != "" {
		t.Errorf("%s differs (-golden +got):\n%s", path, diff)
	}
}

// QuietService is NewTestService with logs discarded.
func QuietService(t testing.TB, withStore bool) *tools.Service {
	t.Helper()
	svc := NewTestService(t, withStore)
	svc.Log = slog.New(slog.DiscardHandler)
	return svc
}

// MCPClient is an in-process MCP client session on srv (NewMCPServer), over
// the SDK's in-memory transports, with the tools it listed.
type MCPClient struct {
	*mcp.ClientSession
	Tools map[string]*mcp.Tool
}

// ConnectMCP connects an in-process MCP client to srv and lists its tools.
func ConnectMCP(t testing.TB, srv *mcp.Server) *MCPClient {
	t.Helper()
	ctx := context.Background()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &MCPClient{ClientSession: cs, Tools: ListTools(t, cs)}
}

// ListTools lists the tools of a client session by name.
func ListTools(t testing.TB, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	tools := make(map[string]*mcp.Tool)
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	return tools
}

// Call calls a tool with raw JSON arguments and checks what every result
// must satisfy: structured content valid under the advertised output schema
// (on error results too), and the same JSON as the last text block.
func (c *MCPClient) Call(t testing.TB, name, args string) *mcp.CallToolResult {
	t.Helper()
	params := &mcp.CallToolParams{Name: name}
	if args != "" {
		params.Arguments = json.RawMessage(args)
	}
	res, err := c.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("tools/call %s: protocol error %v; want a tool result", name, err)
	}
	checkResult(t, c.Tools[name], res)
	return res
}

func checkResult(t testing.TB, tool *mcp.Tool, res *mcp.CallToolResult) {
	t.Helper()
	if tool == nil {
		t.Fatal("the tool was not listed")
	}
	if res.StructuredContent == nil {
		t.Fatalf("result has no structured content: %+v", res)
	}
	schema := ResolveSchema(t, tool.OutputSchema)
	if err := schema.Validate(res.StructuredContent); err != nil {
		t.Errorf("structured content does not match the output schema: %v", err)
	}
	if len(res.Content) != 2 {
		t.Fatalf("result has %d content blocks, want 2 (summary text, JSON)", len(res.Content))
	}
	for i, c := range res.Content {
		if _, ok := c.(*mcp.TextContent); !ok {
			t.Fatalf("content[%d] is %T, want text", i, c)
		}
	}
	var fromText any
	if err := json.Unmarshal([]byte(res.Content[1].(*mcp.TextContent).Text), &fromText); err != nil {
		t.Fatalf("content[1] is not JSON: %v", err)
	}
	if diff := cmp.Diff(res.StructuredContent, fromText); diff != "" {
		t.Errorf("content[1] differs from the structured content (-structured +text):\n%s", diff)
	}
}

// ResolveSchema compiles a schema as a client sees it, with the SDK's
// validator (jsonschema-go, draft 2020-12).
func ResolveSchema(t testing.TB, s any) *jsonschema.Resolved {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatalf("schema does not decode: %v", err)
	}
	resolved, err := js.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		t.Fatalf("schema does not resolve: %v", err)
	}
	return resolved
}

// Structured returns a result's structured content as a map.
func Structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("structured content is %T, want an object", res.StructuredContent)
	}
	return m
}

// StructuredJSON re-encodes a result's structured content, as a client
// forwarding it would.
func StructuredJSON(t testing.TB, res *mcp.CallToolResult) []byte {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Text is the text of a tool result's first content block.
func Text(res *mcp.CallToolResult) string {
	return res.Content[0].(*mcp.TextContent).Text
}

// WantError checks an isError result carrying the error object of SPEC §6.
func WantError(t testing.TB, res *mcp.CallToolResult, code string, status int, fields ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("isError = false, want an error result; content %s", Text(res))
	}
	m := Structured(t, res)
	if m["code"] != code || m["status"] != float64(status) || m["charged"] != false {
		t.Errorf("error = code %v status %v charged %v, want %s %d false", m["code"], m["status"], m["charged"], code, status)
	}
	var got []string
	if list, ok := m["fields"].([]any); ok {
		for _, f := range list {
			got = append(got, f.(map[string]any)["field"].(string))
		}
	}
	for _, f := range fields {
		if !slices.Contains(got, f) {
			t.Errorf("error fields = %v, want %s among them", got, f)
		}
	}
	if msg, _ := m["message"].(string); !strings.Contains(Text(res), msg) || msg == "" {
		t.Errorf("text %q does not carry the message %q", Text(res), msg)
	}
}

// DecodeStructured decodes a result's structured content.
func DecodeStructured(t *testing.T, r mcp.CallToolResult, v any) {
	t.Helper()
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// MCPPaymentFor is an x402/payment object for the first requirement.
func MCPPaymentFor(t *testing.T, pr payment.PaymentRequired) map[string]any {
	t.Helper()
	req := pr.Accepts[0]
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	p := map[string]any{"x402Version": 2, "resource": pr.Resource, "accepted": req, "payload": map[string]any{
		"signature": "0x" + strings.Repeat("ab", 65),
		"authorization": map[string]any{"from": "0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58", "to": req.PayTo, "value": req.Amount,
			"validAfter": "0", "validBefore": strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10), "nonce": "0x" + hex.EncodeToString(b)},
	}}
	return p
}

// SyncBuffer is a log sink shared by the server's goroutines.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// RawPostClient posts one pre-encoded HTTP/1.1 request on a keep-alive
// connection to an httptest server, as a load generator does: no client
// library between the benchmark and the server.
type RawPostClient struct {
	conn net.Conn
	r    *bufio.Reader
	req  []byte
	good func(*http.Response, []byte) bool // whether a 200 answer is the expected one
}

// NewRawPostClient serves h and connects to it; headers are extra header
// lines, each ending in CRLF.
func NewRawPostClient(b *testing.B, h http.Handler, path, headers string, body []byte, good func(*http.Response, []byte) bool) *RawPostClient {
	b.Helper()
	ts := httptest.NewServer(h)
	b.Cleanup(ts.Close)
	return DialRawPostClient(b, ts.Listener.Addr().String(), path, headers, body, good)
}

// DialRawPostClient connects to the HTTP server at addr (host:port).
func DialRawPostClient(b *testing.B, addr, path, headers string, body []byte, good func(*http.Response, []byte) bool) *RawPostClient {
	b.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	req := fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s",
		path, addr, headers, len(body), body)
	return &RawPostClient{conn: conn, r: bufio.NewReaderSize(conn, 1<<20), req: req, good: good}
}

// Call makes one round trip and returns its time.
func (c *RawPostClient) Call(b *testing.B) time.Duration {
	took, err := c.Post()
	if err != nil {
		b.Fatal(err)
	}
	return took
}

// Post makes one round trip and returns its time, or what went wrong.
func (c *RawPostClient) Post() (time.Duration, error) {
	start := time.Now()
	if _, err := c.conn.Write(c.req); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return 0, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK || !c.good(resp, answer) {
		return 0, fmt.Errorf("POST: status %d, %v, body %.200s", resp.StatusCode, err, answer)
	}
	return took, nil
}

// BenchRoundTrips times call in b's loop and reports the CPU time per call
// and the median round trip.
func BenchRoundTrips(b *testing.B, call func(*testing.B) time.Duration) {
	var times []time.Duration
	cpu := CPUNow()
	for b.Loop() {
		times = append(times, call(b))
	}
	ReportCPU(b, cpu)
	b.ReportMetric(MedianMS(times), "median-ms")
}

// InProcessCall is one verification through svc.Verify, timed: the work the
// transports add to.
func InProcessCall(svc *tools.Service, body []byte) func(*testing.B) time.Duration {
	return func(b *testing.B) time.Duration {
		start := time.Now()
		if _, err := svc.Verify(context.Background(), body); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
}

// ProcCPU is the CPU time the threads of process pid have run, from Linux's
// /proc/PID/task/*/schedstat (nanoseconds), or -1 where there is none.
func ProcCPU(pid int) time.Duration {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return -1
	}
	var total time.Duration
	for _, path := range tasks {
		stat, err := os.ReadFile(path)
		if err != nil {
			continue // a thread that ended
		}
		first, _, _ := strings.Cut(string(stat), " ")
		ns, err := strconv.ParseInt(first, 10, 64)
		if err != nil {
			return -1
		}
		total += time.Duration(ns)
	}
	return total
}

// TestPayToEVM is the EVM pay-to address of the tests' payment configurations.
const TestPayToEVM = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

// FakeFacilitator answers /verify and /settle; settleOK decides /settle.
type FakeFacilitator struct {
	Verifies, Settles atomic.Int32
	SettleOK          atomic.Bool
}

func (f *FakeFacilitator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/verify":
		f.Verifies.Add(1)
		io.WriteString(w, `{"isValid":true,"payer":"0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58"}`)
	case "/settle":
		f.Settles.Add(1)
		if f.SettleOK.Load() {
			io.WriteString(w, `{"success":true,"transaction":"0x01","network":"eip155:84532","payer":"0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58"}`)
			return
		}
		io.WriteString(w, `{"success":false,"errorReason":"invalid_exact_evm_nonce_already_used","transaction":"","network":"eip155:84532"}`)
	default:
		http.NotFound(w, r)
	}
}

// MCPToolCall posts one MCP tools/call of tool to endpoint with args, and
// _meta and an X-Forwarded-For header when given, and returns the result;
// the error is the transport's (ctx ended, connection refused).
func MCPToolCall(t *testing.T, ctx context.Context, endpoint, tool string, args any, meta map[string]any, xff string) (mcp.CallToolResult, error) {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return mcp.CallToolResult{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return mcp.CallToolResult{}, err
	}
	if i := bytes.Index(raw, []byte("data: ")); i >= 0 { // an event stream
		raw = bytes.TrimSpace(raw[i+len("data: "):])
	}
	var msg struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("MCP response %s: %v", raw, err)
	}
	return msg.Result, nil
}

// CmpJSON reports whether a and b encode alike.
func CmpJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// HeapNow is the heap in use now, in bytes.
func HeapNow() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// JoinN writes n items made by item, separated by commas.
func JoinN(n int, item func(i int) string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item(i))
	}
	return b.String()
}

// stdioSession is ServeStdio running in this process on pipes, with a
// reader of its output frames.
type stdioSession struct {
	in     *io.PipeWriter
	frames chan []byte
	done   chan error
	NextID int
}

// StartStdioSession serves MCP over in-process pipes with serve
// (mcpserver.ServeStdio) and initializes the session.
func StartStdioSession(t *testing.T, serve func(context.Context, *tools.Service, io.Reader, io.Writer) error, svc *tools.Service) *stdioSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioSession{in: inW, frames: make(chan []byte, 16), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		s.done <- serve(ctx, svc, inR, outW)
		outW.Close()
	}()
	go func() {
		r := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.frames <- line
			}
			if err != nil {
				close(s.frames)
				return
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(10 * time.Second * RaceSlowdown):
			t.Error("ServeStdio did not return after its input closed")
		}
		cancel()
	})
	s.Request(t, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"0"}}`)
	s.Write(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return s
}

func (s *stdioSession) Write(t *testing.T, frame []byte) {
	t.Helper()
	if _, err := s.in.Write(append(frame, '\n')); err != nil {
		t.Fatalf("writing a frame: %v", err)
	}
}

// Next returns the next output frame as an object.
func (s *stdioSession) Next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case line, ok := <-s.frames:
		if !ok {
			t.Fatalf("the server closed its output (it ended: %v)", <-s.done)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("output frame is not a JSON object: %v: %.300s", err, line)
		}
		return m
	case <-time.After(HangBound):
		t.Fatalf("no answer within %v", HangBound)
	}
	return nil
}

// Request sends a request with params (raw JSON) and returns its answer.
func (s *stdioSession) Request(t *testing.T, method, params string) map[string]any {
	t.Helper()
	s.NextID++
	s.Write(t, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.NextID, method, params))
	m := s.Next(t)
	if m["id"] != float64(s.NextID) {
		t.Fatalf("%s: answer %v, want id %d", method, m, s.NextID)
	}
	return m
}

// Alive checks that the session still answers.
func (s *stdioSession) Alive(t *testing.T) {
	t.Helper()
	if m := s.Request(t, "ping", `{}`); m["error"] != nil {
		t.Fatalf("ping: %v", m)
	}
}

// ToolAnswer classifies a verify_schema answer over stdio: a verdict, an
// error result (its code), or a JSON-RPC error (its code).
func ToolAnswer(t *testing.T, m map[string]any) (result, code string, rpcCode float64) {
	t.Helper()
	if e, ok := m["error"].(map[string]any); ok {
		c, _ := e["code"].(float64)
		return "", "", c
	}
	r, _ := m["result"].(map[string]any)
	sc, _ := r["structuredContent"].(map[string]any)
	if sc == nil {
		t.Fatalf("tool result without structured content: %v", m)
	}
	if r["isError"] == true {
		c, _ := sc["code"].(string)
		if st, _ := sc["status"].(float64); st >= 500 {
			t.Errorf("error result with status %v: %v", st, sc)
		}
		return "", c, 0
	}
	res, _ := sc["result"].(string)
	return res, "", 0
}

const heapMetric = "/memory/classes/heap/objects:bytes"

// ReportCPU reports the process's CPU time per iteration since since.
func ReportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64((CPUNow()-since).Microseconds())/float64(b.N), "cpu-µs")
}

// Median is the median of times.
func Median(times []time.Duration) time.Duration {
	if len(times) == 0 {
		return 0
	}
	times = slices.Clone(times)
	slices.Sort(times)
	return times[len(times)/2]
}

// MS is d in milliseconds.
func MS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// MedianMS is the median of times in milliseconds.
func MedianMS(times []time.Duration) float64 { return MS(Median(times)) }

// Marker is placed in requests that fail; it must never come back.
const Marker = "MARKER-7f3c9e"

// repoTestdata finds the repository's testdata/ folder from the working
// directory, which is the directory of the package under test: the first
// parent that holds go.mod.
func repoTestdata() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("testkit: no go.mod above " + dir)
		}
		dir = parent
	}
}
