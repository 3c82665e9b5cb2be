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
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
			} `json:"parameters"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("decoding openapi.json: %v", err)
	}
	pathParam := func(path, name string) json.RawMessage {
		for _, p := range doc.Paths[path]["get"].Parameters {
			if p.Name == name {
				return p.Schema
			}
		}
		return nil
	}
	for _, tt := range []struct {
		tool, member string // member: a member of the input, or "" for all of it
		where        string
		documented   json.RawMessage
	}{
		{contract.VerifySchema, "", "components.schemas.VerifyRequest", doc.Components.Schemas["VerifyRequest"]},
		{contract.Record, "agent_id", "the agent_id parameter of GET /score/{agent_id}", pathParam("/score/{agent_id}", "agent_id")},
	} {
		listed := inputs[tt.tool]
		if tt.member != "" {
			var input struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(listed, &input); err != nil {
				t.Fatalf("%s: decoding its input schema: %v", tt.tool, err)
			}
			listed = input.Properties[tt.member]
		}
		a, b := compactJSON(t, listed), compactJSON(t, tt.documented)
		if len(a) == 0 || len(b) == 0 {
			t.Errorf("%s %s: tools/list has %d bytes of input schema, %s %d", tt.tool, tt.member, len(a), tt.where, len(b))
			continue
		}
		if !bytes.Equal(a, b) {
			var x, y any
			_ = json.Unmarshal(a, &x)
			_ = json.Unmarshal(b, &y)
			t.Errorf("%s %s: the input schema of tools/list (-) and %s (+) differ:\n%s", tt.tool, tt.member, tt.where, cmp.Diff(x, y))
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
		{"input member", `{"x-contract":"get_verification_record.input.agent_id"}`,
			`{"type":"string","minLength":1,"maxLength":200,"description":"the agent_id that verification requests named (e.g. the seller's id)"}`, ""},
		{"unknown part", `{"x-contract":"verify_schema.output"}`, "", "names no part"},
		{"unknown member", `{"x-contract":"verify_schema.input.agent"}`, "", "names no part"},
		{"member of the answer", `{"x-contract":"verify_schema.answer.result"}`, "", "names no part"},
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
