package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/tools/contract"
)

// TestOpenAPIRequestIsTheToolInput: the request the OpenAPI document
// describes for a tool's REST route is, byte for byte once compacted, the
// input schema MCP's tools/list advertises for the tool: both come from
// package contract. A second hand-written copy on either side fails it.
func TestOpenAPIRequestIsTheToolInput(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	resp, body := f.do(t, http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /mcp tools/list = %d %s", resp.StatusCode, body)
	}
	var list struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("decoding tools/list: %v", err)
	}
	inputs := map[string]json.RawMessage{}
	for _, tool := range list.Result.Tools {
		inputs[tool.Name] = tool.InputSchema
	}
	raw, _ := openAPIDoc(t, f)
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("decoding openapi.json: %v", err)
	}
	for _, tt := range []struct{ tool, component string }{
		{contract.VerifySchema, "VerifyRequest"},
	} {
		listed, documented := compactJSON(t, inputs[tt.tool]), compactJSON(t, doc.Components.Schemas[tt.component])
		if len(listed) == 0 || len(documented) == 0 {
			t.Errorf("%s: tools/list has %d bytes of input schema, components.schemas.%s %d", tt.tool, len(listed), tt.component, len(documented))
			continue
		}
		if !bytes.Equal(listed, documented) {
			var a, b any
			_ = json.Unmarshal(listed, &a)
			_ = json.Unmarshal(documented, &b)
			t.Errorf("%s: the input schema of tools/list (-) and components.schemas.%s (+) differ:\n%s", tt.tool, tt.component, cmp.Diff(a, b))
		}
	}
}

// compactJSON is raw without insignificant white space.
func compactJSON(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compacting %.100s: %v", raw, err)
	}
	return b.Bytes()
}

// TestWithContract: a placeholder takes the named part of a tool's
// contract, white space inside it allowed; one that names no tool, or no
// part of one, fails the build of the document instead of serving it.
func TestWithContract(t *testing.T) {
	for _, tt := range []struct {
		name, in, want, err string
	}{
		{"input", `{"a":{"x-contract":"get_verification_record.input"}}`, `{"a":` + contract.RecordInput + `}`, ""},
		{"example, spaced", "{\"a\": { \"x-contract\" :\n \"verify_schema.example\" }}", `{"a": ` + contract.VerifySchemaExample + `}`, ""},
		{"answer", `[{"x-contract":"verify_receipt.answer"}]`, `[` + contract.ReceiptReport + `]`, ""},
		{"in a string, untouched", `{"d":"{\"x-contract\":\"nothing\"}"}`, `{"d":"{\"x-contract\":\"nothing\"}"}`, ""},
		{"unknown tool", `{"x-contract":"verify.input"}`, "", "names no tool"},
		{"unknown part", `{"x-contract":"verify_schema.output"}`, "", "names no part"},
		{"no example", `{"x-contract":"verify_receipt.example"}`, "", "names no part"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withContract([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("withContract(%s) = %s, %v; want an error with %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("withContract(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}
