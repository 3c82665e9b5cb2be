package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// quietService is newTestService with logs discarded.
func quietService(t testing.TB, withStore bool) *Service {
	t.Helper()
	svc := newTestService(t, withStore)
	svc.Log = slog.New(slog.DiscardHandler)
	return svc
}

// mcpClient is an in-process MCP client session on NewMCPServer(svc), over
// the SDK's in-memory transports, with the tools it listed.
type mcpClient struct {
	*mcp.ClientSession
	tools map[string]*mcp.Tool
}

func connectMCP(t testing.TB, svc *Service) *mcpClient {
	t.Helper()
	ctx := context.Background()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := NewMCPServer(svc).Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &mcpClient{ClientSession: cs, tools: listTools(t, cs)}
}

func listTools(t testing.TB, cs *mcp.ClientSession) map[string]*mcp.Tool {
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

// call calls a tool with raw JSON arguments and checks what every result
// must satisfy: structured content valid under the advertised output schema
// (on error results too), and the same JSON as the last text block.
func (c *mcpClient) call(t testing.TB, name, args string) *mcp.CallToolResult {
	t.Helper()
	params := &mcp.CallToolParams{Name: name}
	if args != "" {
		params.Arguments = json.RawMessage(args)
	}
	res, err := c.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("tools/call %s: protocol error %v; want a tool result", name, err)
	}
	checkResult(t, c.tools[name], res)
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
	schema := resolveSchema(t, tool.OutputSchema)
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

// resolveSchema compiles a schema as a client sees it, with the SDK's
// validator (jsonschema-go, draft 2020-12).
func resolveSchema(t testing.TB, s any) *jsonschema.Resolved {
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

// structured returns a result's structured content as a map.
func structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("structured content is %T, want an object", res.StructuredContent)
	}
	return m
}

// structuredJSON re-encodes a result's structured content, as a client
// forwarding it would.
func structuredJSON(t testing.TB, res *mcp.CallToolResult) []byte {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func text(res *mcp.CallToolResult) string {
	return res.Content[0].(*mcp.TextContent).Text
}

// wantError checks an isError result carrying the error object of SPEC §6.
func wantError(t testing.TB, res *mcp.CallToolResult, code string, status int, fields ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("isError = false, want an error result; content %s", text(res))
	}
	m := structured(t, res)
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
	if msg, _ := m["message"].(string); !strings.Contains(text(res), msg) || msg == "" {
		t.Errorf("text %q does not carry the message %q", text(res), msg)
	}
}

// toolSnapshot is what a tool's golden file holds.
type toolSnapshot struct {
	Name         string               `json:"name"`
	Title        string               `json:"title"`
	Description  string               `json:"description"`
	InputSchema  any                  `json:"inputSchema"`
	OutputSchema any                  `json:"outputSchema"`
	Annotations  *mcp.ToolAnnotations `json:"annotations"`
}

func TestMCPToolSnapshots(t *testing.T) {
	c := connectMCP(t, quietService(t, true))
	want := []string{ToolRecord, ToolVerifyReceipt, ToolVerifySchema}
	if got := slices.Sorted(maps.Keys(c.tools)); !slices.Equal(got, want) {
		t.Fatalf("tools/list names = %v, want %v", got, want)
	}
	for _, name := range want {
		t.Run(name, func(t *testing.T) {
			tool := c.tools[name]
			got, err := json.MarshalIndent(toolSnapshot{tool.Name, tool.Title, tool.Description, tool.InputSchema, tool.OutputSchema, tool.Annotations}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "mcp_tool_"+name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("missing snapshot (run go test -update to write it): %v", err)
			}
			if diff := cmp.Diff(string(golden), string(got)); diff != "" {
				t.Errorf("tool %s differs from %s (-golden +got):\n%s", name, path, diff)
			}
			// verify_schema stores a verdict with each call; the others
			// only read.
			a, readOnly := tool.Annotations, name != ToolVerifySchema
			if a == nil || a.ReadOnlyHint != readOnly || a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint ||
				a.DestructiveHint == nil || *a.DestructiveHint {
				t.Errorf("annotations = %+v, want read-only %t, not idempotent, not destructive, not open-world", a, readOnly)
			}
			in := resolveSchema(t, tool.InputSchema)
			if err := in.Validate(map[string]any{"bogus": 1}); err == nil {
				t.Error("input schema accepts an unknown argument; want additionalProperties false")
			}
			resolveSchema(t, tool.OutputSchema)
		})
	}
}

func TestMCPInitialize(t *testing.T) {
	c := connectMCP(t, quietService(t, true))
	init := c.InitializeResult()
	if init.Instructions != mcpInstructions {
		t.Errorf("instructions = %q, want mcpInstructions", init.Instructions)
	}
	for _, tool := range []string{ToolVerifySchema, ToolRecord, ToolVerifyReceipt} {
		if !strings.Contains(init.Instructions, tool) {
			t.Errorf("instructions do not mention %s", tool)
		}
	}
	if init.ServerInfo.Name != mcpServerName || init.ServerInfo.Version != "test" {
		t.Errorf("serverInfo = %+v", init.ServerInfo)
	}
	caps := init.Capabilities
	if caps.Tools == nil || caps.Tools.ListChanged || caps.Logging != nil || caps.Resources != nil || caps.Prompts != nil {
		t.Errorf("capabilities = %+v, want tools only, without listChanged", caps)
	}
}

func TestMCPUnknownToolIsProtocolError(t *testing.T) {
	c := connectMCP(t, quietService(t, true))
	_, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("calling an unknown tool: err = %v, want a JSON-RPC invalid-params error", err)
	}
}

func TestToolArgs(t *testing.T) {
	tests := []struct {
		name, args string
		want       map[string]string
		wantField  string
	}{
		{"absent", "", map[string]string{}, ""},
		{"members raw", `{"a": {"x":1.50}, "b": "s"}`, map[string]string{"a": `{"x":1.50}`, "b": `"s"`}, ""},
		{"not an object", `[1]`, nil, "arguments"},
		{"unknown member", `{"a":1,"secret":2}`, nil, "arguments"},
		{"duplicate", `{"a":1,"a":2}`, nil, "arguments"},
		{"invalid value", `{"a":"\xff"}`, nil, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, e := toolArgs(json.RawMessage(tt.args), "a", "b")
			if tt.wantField != "" {
				if e == nil || len(e.Fields) != 1 || e.Fields[0].Field != tt.wantField {
					t.Fatalf("toolArgs(%s) error = %+v, want one problem on %s", tt.args, e, tt.wantField)
				}
				if strings.Contains(e.Message, "secret") || strings.Contains(e.Fields[0].Problem, "secret") {
					t.Errorf("error echoes an unknown key: %+v", e)
				}
				return
			}
			if e != nil {
				t.Fatalf("toolArgs(%s) = %v", tt.args, e)
			}
			gotStr := make(map[string]string)
			for k, v := range got {
				gotStr[k] = string(v)
			}
			if diff := cmp.Diff(tt.want, gotStr); diff != "" {
				t.Errorf("toolArgs(%s) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// probeTool reports ClientAddr of its call as text.
func probeTool(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "probe", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ClientAddr(req)}}}, nil
		})
}

func TestMCPHandlerClientAddr(t *testing.T) {
	svc := quietService(t, true)
	srv := NewMCPServer(svc)
	probeTool(srv)
	ts := httptest.NewServer(mcpHTTPHandler(srv, svc.log()))
	defer ts.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"probe","arguments":{}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(RemoteAddrHeader, "203.0.113.9:1") // a client must not choose its address
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var msg struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil || len(msg.Result.Content) != 1 {
		t.Fatalf("response %s: %v", raw, err)
	}
	got := msg.Result.Content[0].(*mcp.TextContent).Text
	if !strings.HasPrefix(got, "127.0.0.1:") {
		t.Errorf("ClientAddr = %q, want the connection's 127.0.0.1:port", got)
	}
}

func TestMCPHandlerStatelessJSON(t *testing.T) {
	svc := quietService(t, true)
	ts := httptest.NewServer(NewMCPHandler(svc))
	defer ts.Close()
	post := func(body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	// No initialize and no session: every POST stands alone.
	resp := post(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "application/json") {
		t.Errorf("tools/list without a session: status %d, Content-Type %q; want 200 application/json", resp.StatusCode, ct)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("Mcp-Session-Id = %q, want none (stateless)", id)
	}
	var list struct {
		Result mcp.ListToolsResult `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Result.Tools) != 3 {
		t.Errorf("tools/list: %d tools, err %v; want 3", len(list.Result.Tools), err)
	}
	get, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d, want 405 (no server-to-client stream)", get.StatusCode)
	}
}

func TestMCPOverHTTPClient(t *testing.T) {
	svc := quietService(t, true)
	ts := httptest.NewServer(NewMCPHandler(svc))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	c := &mcpClient{ClientSession: cs, tools: listTools(t, cs)}
	res := c.call(t, ToolVerifySchema, string(readTestdata(t, "invoice-pass.json")))
	if res.IsError || structured(t, res)["result"] != "pass" {
		t.Fatalf("verify_schema over HTTP: %s", text(res))
	}
	check := c.call(t, ToolVerifyReceipt, `{"receipt":`+string(structuredJSON(t, res))+`}`)
	if structured(t, check)["valid"] != true {
		t.Errorf("receipt from HTTP does not verify: %s", text(check))
	}
}

func TestServeStdioReturnsOnEOF(t *testing.T) {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), quietService(t, false), in, &out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio at end of input = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return at end of input")
	}
}

func TestServeStdioReturnsOnCancel(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, quietService(t, false), pr, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after cancel")
	}
}

// TestMCPOutputSchemasAcceptPaymentRequired checks that the chargeable
// tools' output schemas admit the x402 PaymentRequired that a paying HTTP
// deployment answers with (clients validate isError results too), and that
// verify_receipt, which is never charged, does not.
func TestMCPOutputSchemasAcceptPaymentRequired(t *testing.T) {
	c := connectMCP(t, quietService(t, true))
	var required any
	if err := json.Unmarshal([]byte(`{"x402Version":2,"error":"payment required",`+
		`"resource":{"url":"http://127.0.0.1:8080/mcp","description":"verify"},`+
		`"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"20000","asset":"0x0","payTo":"0x1","maxTimeoutSeconds":60}]}`), &required); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{ToolVerifySchema: true, ToolRecord: true, ToolVerifyReceipt: false} {
		err := resolveSchema(t, c.tools[name].OutputSchema).Validate(required)
		if got := err == nil; got != want {
			t.Errorf("%s output schema accepts a PaymentRequired: %t, want %t (%v)", name, got, want, err)
		}
	}
}
