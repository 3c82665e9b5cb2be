package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	c := testkit.ConnectMCP(t, NewMCPServer(testkit.QuietService(t, true)))
	want := []string{contract.Record, contract.VerifyReceipt, contract.VerifySchema}
	if got := slices.Sorted(maps.Keys(c.Tools)); !slices.Equal(got, want) {
		t.Fatalf("tools/list names = %v, want %v", got, want)
	}
	for _, name := range want {
		t.Run(name, func(t *testing.T) {
			tool := c.Tools[name]
			got, err := json.MarshalIndent(toolSnapshot{tool.Name, tool.Title, tool.Description, tool.InputSchema, tool.OutputSchema, tool.Annotations}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			testkit.CheckGolden(t, filepath.Join("testdata", "mcp_tool_"+name+".json"), got)
			// verify_schema stores a verdict with each call; the others
			// only read.
			a, readOnly := tool.Annotations, name != contract.VerifySchema
			if a == nil || a.ReadOnlyHint != readOnly || a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint ||
				a.DestructiveHint == nil || *a.DestructiveHint {
				t.Errorf("annotations = %+v, want read-only %t, not idempotent, not destructive, not open-world", a, readOnly)
			}
			in := testkit.ResolveSchema(t, tool.InputSchema)
			if err := in.Validate(map[string]any{"bogus": 1}); err == nil {
				t.Error("input schema accepts an unknown argument; want additionalProperties false")
			}
			testkit.ResolveSchema(t, tool.OutputSchema)
		})
	}
}

func TestMCPInitialize(t *testing.T) {
	c := testkit.ConnectMCP(t, NewMCPServer(testkit.QuietService(t, true)))
	init := c.InitializeResult()
	if init.Instructions != mcpInstructions {
		t.Errorf("instructions = %q, want mcpInstructions", init.Instructions)
	}
	for _, tool := range []string{contract.VerifySchema, contract.Record, contract.VerifyReceipt} {
		if !strings.Contains(init.Instructions, tool) {
			t.Errorf("instructions do not mention %s", tool)
		}
	}
	if init.ServerInfo.Name != mcpServerName || init.ServerInfo.Version != "test" {
		t.Errorf("serverInfo = %+v", init.ServerInfo)
	}
	caps := init.Capabilities
	//lint:ignore SA1019 the served versions still define logging.
	// logging/setLevel is answered, so logging is declared.
	if caps.Tools == nil || caps.Tools.ListChanged || caps.Logging == nil || caps.Resources != nil || caps.Prompts != nil {
		t.Errorf("capabilities = %+v, want tools without listChanged, and logging", caps)
	}
}

func TestMCPUnknownToolIsProtocolError(t *testing.T) {
	c := testkit.ConnectMCP(t, NewMCPServer(testkit.QuietService(t, true)))
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
	svc := testkit.QuietService(t, true)
	srv := NewMCPServer(svc)
	probeTool(srv)
	ts := httptest.NewServer(mcpHTTPHandler(srv, svc.Logger()))
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
	svc := testkit.QuietService(t, true)
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
	svc := testkit.QuietService(t, true)
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
	c := &testkit.MCPClient{ClientSession: cs, Tools: testkit.ListTools(t, cs)}
	res := c.Call(t, contract.VerifySchema, string(testkit.ReadTestdata(t, "invoice-pass.json")))
	if res.IsError || testkit.Structured(t, res)["result"] != "pass" {
		t.Fatalf("verify_schema over HTTP: %s", testkit.Text(res))
	}
	check := c.Call(t, contract.VerifyReceipt, `{"receipt":`+string(testkit.StructuredJSON(t, res))+`}`)
	if testkit.Structured(t, check)["valid"] != true {
		t.Errorf("receipt from HTTP does not verify: %s", testkit.Text(check))
	}
}

func TestServeStdioReturnsOnEOF(t *testing.T) {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), testkit.QuietService(t, false), in, &out) }()
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
	go func() { done <- ServeStdio(ctx, testkit.QuietService(t, false), pr, io.Discard) }()
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
	c := testkit.ConnectMCP(t, NewMCPServer(testkit.QuietService(t, true)))
	var required any
	if err := json.Unmarshal([]byte(`{"x402Version":2,"error":"payment required",`+
		`"resource":{"url":"http://127.0.0.1:8080/mcp","description":"verify"},`+
		`"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"20000","asset":"0x0","payTo":"0x1","maxTimeoutSeconds":60}]}`), &required); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{contract.VerifySchema: true, contract.Record: true, contract.VerifyReceipt: false} {
		err := testkit.ResolveSchema(t, c.Tools[name].OutputSchema).Validate(required)
		if got := err == nil; got != want {
			t.Errorf("%s output schema accepts a PaymentRequired: %t, want %t (%v)", name, got, want, err)
		}
	}
}
