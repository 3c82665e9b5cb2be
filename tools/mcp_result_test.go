package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
)

// TestEncodedToolResultSameBytes: a wrapped result encodes to exactly the
// bytes of the SDK's own encoding, on the fast path (our results) and on
// the SDK's (anything else).
func TestEncodedToolResultSameBytes(t *testing.T) {
	svc := quietService(t, false)
	verified := func(name, detail string) *mcp.CallToolResult {
		body := readTestdata(t, name)
		if detail != "" {
			body = withDetail(t, body, detail)
		}
		v, err := svc.Verify(context.Background(), body)
		if err != nil {
			t.Fatal(err)
		}
		return answerResult(verifyText(v), v.Answer)
	}
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	withMeta := answerResult("paid", []byte(`{"result":"pass"}`))
	withMeta.SetMeta(map[string]any{"x402/payment-response": map[string]any{"success": true, "note": "<&>"}})
	withState := answerResult("state", []byte(`{}`))
	withState.RequestState = "opaque"
	for _, tt := range []struct {
		name string
		res  *mcp.CallToolResult
		fast bool // encoded without the SDK
	}{
		{"verify pass", verified("invoice-pass.json", ""), true},
		{"verify fail", verified("invoice-fail.json", ""), true},
		{"verify compact", verified("invoice-fail.json", "compact"), true},
		{"error result", errorResult(InvalidRequest([]engine.FieldProblem{{Field: "task_id", Problem: "is <not> a string & \u2028", Fix: "Send \"x\"."}})), true},
		{"payment required", (&Service{}).paymentResult(&payment.Error{Code: "payment_required", Status: 402, Message: "Pay <first> & retry.", PaymentRequired: &payment.PaymentRequired{}}), false},
		{"texts that need escaping", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "a<b>&c \u2028\u2029 \x00\x1f\t\n \xff\xfe \"q\" \\ é"}, &mcp.TextContent{}},
			StructuredContent: json.RawMessage(`{"a":"x\" y \\","b":[1,2.5e3,null,true]}`),
		}, true},
		{"no content", &mcp.CallToolResult{}, true},
		{"empty content", &mcp.CallToolResult{Content: []mcp.Content{}, IsError: true}, true},
		{"HTML in structured content", &mcp.CallToolResult{Content: text("x"), StructuredContent: json.RawMessage(`{"a":"<b>&","c>":">=1"}`)}, true},
		{"line separators in structured content", &mcp.CallToolResult{Content: text("x"), StructuredContent: json.RawMessage("{\"a\":\"\u2028x\u2029\u2027\u00e9\"}")}, true},
		{"structured content not compact", &mcp.CallToolResult{Content: text("x"), StructuredContent: json.RawMessage("{ \"a\" :\n[1, 2] }")}, false},
		{"structured content not raw", &mcp.CallToolResult{Content: text("x"), StructuredContent: map[string]any{"b": 1, "a": "<"}}, false},
		{"empty raw structured content", &mcp.CallToolResult{Content: text("x"), StructuredContent: json.RawMessage{}}, false},
		{"_meta", withMeta, false},
		{"request state", withState, false},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}}, false},
		{"annotated text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 1}}}}, false},
		{"text with _meta", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x", Meta: mcp.Meta{"k": "v"}}}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := tt.res.MarshalJSON()
			got, err := encodedToolResult{tt.res}.MarshalJSON()
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("error %v, want the SDK's %v", err, wantErr)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encoded =\n%s\nwant the SDK's\n%s", got, want)
			}
			if _, fast := appendToolResult(nil, tt.res); fast != tt.fast {
				t.Errorf("fast path = %v, want %v", fast, tt.fast)
			}
		})
	}
}

// TestEncodeToolResultsOnTheWire: NewMCPServer answers tools/call with the
// same bytes as a server of the same tools without encodeToolResults, also
// where the SDK adds to the result after the handler (a request of protocol
// 2026-07-28 gets resultType and _meta).
func TestEncodeToolResultsOnTheWire(t *testing.T) {
	svc := quietService(t, true)
	ours := httptest.NewServer(NewMCPHandler(svc))
	defer ours.Close()
	plain := mcp.NewServer(&mcp.Implementation{Name: mcpServerName, Title: "Agent Output Verifier", Version: svc.Version},
		&mcp.ServerOptions{Instructions: mcpInstructions, Logger: svc.log(), Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	plain.AddTool(verifySchemaTool(), svc.mcpVerifySchema)
	plain.AddTool(recordTool(), svc.mcpRecord)
	plain.AddTool(verifyReceiptTool(), svc.mcpVerifyReceipt)
	reference := httptest.NewServer(mcpHTTPHandler(plain, svc.log()))
	defer reference.Close()
	newProtocol := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},`
	for _, tt := range []struct {
		name, version, params string
		want                  string // in the answer
	}{
		{"invalid verify_schema", "", `{"name":"verify_schema","arguments":{"task_id":1,"bogus":"<&>"}}`, `"isError":true`},
		{"invalid verify_schema 2025-11-25", "2025-11-25", `{"name":"verify_schema","arguments":{"task_id":"t"}}`, `"isError":true`},
		{"invalid receipt", "", `{"name":"verify_receipt","arguments":{"receipt":{"result":"pass"}}}`, `"valid":false`},
		{"record without arguments", "2025-06-18", `{"name":"get_verification_record"}`, `"isError":true`},
		{"protocol 2026-07-28", "2026-07-28", `{` + newProtocol + `"name":"verify_schema","arguments":{"task_id":1}}`, `"resultType":"complete"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + tt.params + `}`
			post := func(url string) []byte {
				t.Helper()
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if tt.version != "" {
					req.Header.Set("Mcp-Protocol-Version", tt.version)
				}
				if tt.version >= "2026-07-28" {
					req.Header.Set("Mcp-Method", "tools/call")
					req.Header.Set("Mcp-Name", "verify_schema")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("POST: %d %v %s", resp.StatusCode, err, b)
				}
				return b
			}
			got, want := post(ours.URL), post(reference.URL)
			if !bytes.Equal(got, want) {
				t.Errorf("answer =\n%s\nwant the SDK's\n%s", got, want)
			}
			if !bytes.Contains(got, []byte(tt.want)) {
				t.Errorf("answer lacks %s: %s", tt.want, got)
			}
		})
	}
}

// FuzzEncodedToolResult: for any texts and any structured content, a
// wrapped result encodes as the SDK's JSON-RPC layer encodes the result
// itself (or fails where that fails: invalid structured content is caught
// by the encoder, as it checks every MarshalJSON's output).
func FuzzEncodedToolResult(f *testing.F) {
	f.Add("PASS: task \"inv\" <b>&</b>\u2028", []byte(`{"a":"x\" y","b":[1,2.5e3,null,true],"c":">= 1"}`), false)
	f.Add("\xff\x00\t", []byte("{ \"a\" : \"\u2029\" }"), true)
	f.Add("", []byte(`"\u003c"`), false)
	f.Add("x", []byte(`{"a":"\\\"<"}`), true)
	f.Add("x", []byte(`[1,`), false)
	encode := func(v any) ([]byte, error) {
		// As jsonrpc2 encodes a result (an Encoder without HTML escaping).
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		err := enc.Encode(v)
		return buf.Bytes(), err
	}
	f.Fuzz(func(t *testing.T, text string, structured []byte, isError bool) {
		res := &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: string(structured)}},
			StructuredContent: json.RawMessage(structured),
			IsError:           isError,
		}
		want, wantErr := encode(res)
		got, err := encode(encodedToolResult{res})
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("error %v, want the SDK's %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("encoded =\n%s\nwant the SDK's\n%s", got, want)
		}
	})
}
