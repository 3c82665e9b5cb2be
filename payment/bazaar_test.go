package payment

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/internal/ijson"
)

// TestBazaarDiscovery: every route's bazaar entry is what the x402 bazaar
// spec (specs/extensions/bazaar.md) and @x402/extensions 2.27 read: an MCP
// tool's input names it toolName (required by the entry's own schema, no
// "tool" member), an HTTP route's names its method; info validates against
// schema (with the project's own engine, as a facilitator validates it with
// ajv); and resource carries the service metadata within the spec's bounds.
// e2e/x402-ext runs the package's own validators on a live server's 402s.
func TestBazaarDiscovery(t *testing.T) {
	mcpTool := Route{Kind: KindVerify, Tool: "verify_schema", Resource: Resource{URL: "http://127.0.0.1:8080/mcp", Description: "Verify"},
		InputSchema: json.RawMessage(`{"type":"object","required":["task_id"]}`), Example: json.RawMessage(`{"task_id":"t"}`)}
	for _, tt := range []struct {
		name      string
		route     Route
		input     map[string]any // members info.input must have
		required  []string       // schema.properties.input.required
		wantTags0 string
	}{
		{"mcp tool", mcpTool, map[string]any{"type": "mcp", "toolName": "verify_schema", "transport": "streamable-http"},
			[]string{"type", "toolName", "inputSchema"}, "verification"},
		{"mcp record", Route{Kind: KindScore, Tool: "get_verification_record", Resource: Resource{URL: "http://127.0.0.1:8080/mcp"}},
			map[string]any{"type": "mcp", "toolName": "get_verification_record"}, []string{"type", "toolName", "inputSchema"}, "reputation"},
		{"post route", testRoute(KindVerify), map[string]any{"type": "http", "method": http.MethodPost, "bodyType": "json"},
			[]string{"type", "method", "bodyType", "body"}, "verification"},
		{"get route", testRoute(KindScore), map[string]any{"type": "http", "method": http.MethodGet},
			[]string{"type", "method"}, "reputation"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.route.bazaar())
			if err != nil {
				t.Fatal(err)
			}
			v, err := ijson.Decode(raw, nil)
			if err != nil {
				t.Fatal(err)
			}
			ext := v.(map[string]any)
			info, _ := ext["info"].(map[string]any)
			input, _ := info["input"].(map[string]any)
			for k, want := range tt.input {
				if input[k] != want {
					t.Errorf("info.input.%s = %v, want %v", k, input[k], want)
				}
			}
			if _, has := input["tool"]; has {
				t.Errorf("info.input has tool; the spec's member is toolName: %v", input)
			}
			sch, _ := ext["schema"].(map[string]any)
			props, _ := sch["properties"].(map[string]any)
			inSchema, _ := props["input"].(map[string]any)
			var required []string
			for _, r := range inSchema["required"].([]any) {
				required = append(required, r.(string))
			}
			if !slices.Equal(required, tt.required) {
				t.Errorf("schema input.required = %v, want %v", required, tt.required)
			}
			compiled, err := schema.Compile(sch, nil)
			if err != nil {
				t.Fatalf("compiling the entry's schema: %v", err)
			}
			res, err := compiled.Evaluate(info)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Failures {
				t.Errorf("info fails its own schema: %s at %q: %s", f.Keyword, f.InstancePath, f.Sentence())
			}

			res2 := tt.route.resource()
			if res2.ServiceName != ServiceName || !bazaarText(res2.ServiceName) {
				t.Errorf("resource.serviceName = %q, want %q (printable ASCII, at most 32)", res2.ServiceName, ServiceName)
			}
			if len(res2.Tags) == 0 || len(res2.Tags) > 5 || res2.Tags[0] != tt.wantTags0 {
				t.Errorf("resource.tags = %v, want 1 to 5 tags starting %q", res2.Tags, tt.wantTags0)
			}
			seen := map[string]bool{}
			for _, tag := range res2.Tags {
				if !bazaarText(tag) || seen[strings.ToLower(tag)] {
					t.Errorf("resource.tags entry %q is not printable ASCII of at most 32 characters, or repeats", tag)
				}
				seen[strings.ToLower(tag)] = true
			}
		})
	}
}

// bazaarText is the spec's rule for serviceName and each tag: non-empty
// printable ASCII (U+0020–U+007E), at most 32 characters.
func bazaarText(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
