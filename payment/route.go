package payment

import (
	"encoding/json"
	"net/http"
)

// Kind is what a request is for: it decides the price and whether the free
// allowance covers it.
type Kind int

// Kinds of paid requests.
const (
	// KindVerify: POST /verify/schema, /verify/deliverable, MCP
	// verify_schema. Covered by the free allowance; priced PriceVerify.
	KindVerify Kind = iota + 1
	// KindScore: GET /score/{agent_id}, MCP get_verification_record. Never
	// free with payment on (free with payment off); priced PriceScore.
	KindScore
)

func (k Kind) String() string {
	switch k {
	case KindVerify:
		return "verify"
	case KindScore:
		return "score"
	}
	return "unknown"
}

// Route describes the resource a request is for: what a 402 advertises in
// resource and in the bazaar extension. An HTTP route has Method; an MCP
// tool has Tool.
type Route struct {
	Kind     Kind
	Resource Resource // URL is absolute (an MCP tool's defaults to mcp://tool/<Tool>)
	// Method is the HTTP method ("POST", "GET"); "" for an MCP tool.
	Method string
	// RouteTemplate is a dynamic route's template in :param form
	// ("/score/:agent_id"), PathParams this request's values.
	RouteTemplate string
	PathParams    map[string]string
	// Tool is the MCP tool name; "" for an HTTP route.
	Tool string
	// InputSchema is the JSON Schema of the body (POST) or of the tool's
	// arguments (MCP); Example an example body or arguments. Both optional
	// (an MCP tool gets {"type":"object"}).
	InputSchema json.RawMessage
	Example     json.RawMessage
	// OutputExample is an example answer, optional.
	OutputExample json.RawMessage
}

// ServiceName is the bazaar resource.serviceName of every paid route: the
// hosted service's name, as verify.service has it.
const ServiceName = "Agent Output Verifier"

// tags are the bazaar resource.tags of a kind of route (at most 5, each
// printable ASCII of at most 32 characters, as the spec bounds them).
func (k Kind) tags() []string {
	if k == KindScore {
		return []string{"reputation", "trust-score", "ai-agents", "receipts"}
	}
	return []string{"verification", "json-schema", "ai-agents", "receipts", "escrow"}
}

func (r Route) resource() *Resource {
	res := r.Resource
	if res.URL == "" && r.Tool != "" {
		res.URL = "mcp://tool/" + r.Tool
	}
	if res.MimeType == "" {
		res.MimeType = "application/json"
	}
	if res.ServiceName == "" {
		res.ServiceName = ServiceName
	}
	if res.Tags == nil {
		res.Tags = r.Kind.tags()
	}
	return &res
}

// bazaar is the route's bazaar discovery extension (x402 specs/extensions/
// bazaar.md): info describes how to call the route, schema validates info.
func (r Route) bazaar() Extension {
	input := map[string]any{}
	var inputSchema map[string]any
	var required []string
	switch {
	case r.Tool != "":
		toolSchema := r.InputSchema
		if len(toolSchema) == 0 {
			toolSchema = json.RawMessage(`{"type":"object"}`)
		}
		// toolName, as the spec and @x402/extensions name it (its
		// validateDiscoveryExtensionSpec refuses an entry without it).
		input["type"], input["toolName"], input["inputSchema"], input["transport"] = "mcp", r.Tool, toolSchema, "streamable-http"
		if r.Resource.Description != "" {
			input["description"] = r.Resource.Description
		}
		if len(r.Example) > 0 {
			input["example"] = r.Example
		}
		inputSchema = map[string]any{
			"type":        map[string]any{"type": "string", "const": "mcp"},
			"toolName":    map[string]any{"type": "string", "const": r.Tool},
			"description": map[string]any{"type": "string"},
			"transport":   map[string]any{"type": "string", "enum": []string{"streamable-http", "sse"}},
			"inputSchema": map[string]any{"type": "object"},
			"example":     map[string]any{"type": "object"},
		}
		required = []string{"type", "toolName", "inputSchema"}
	case r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch:
		body := any(map[string]any{})
		if len(r.Example) > 0 {
			body = r.Example
		}
		bodySchema := any(map[string]any{"type": "object"})
		if len(r.InputSchema) > 0 {
			bodySchema = r.InputSchema
		}
		input["type"], input["method"], input["bodyType"], input["body"] = "http", r.Method, "json", body
		inputSchema = map[string]any{
			"type":     map[string]any{"type": "string", "const": "http"},
			"method":   map[string]any{"type": "string", "enum": []string{"POST", "PUT", "PATCH"}},
			"bodyType": map[string]any{"type": "string", "enum": []string{"json", "form-data", "text"}},
			"body":     bodySchema,
		}
		required = []string{"type", "method", "bodyType", "body"}
	default:
		input["type"], input["method"] = "http", r.Method
		inputSchema = map[string]any{
			"type":   map[string]any{"type": "string", "const": "http"},
			"method": map[string]any{"type": "string", "enum": []string{"GET", "HEAD", "DELETE"}},
		}
		required = []string{"type", "method"}
	}
	if len(r.PathParams) > 0 && r.Tool == "" {
		input["pathParams"] = r.PathParams
		inputSchema["pathParams"] = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	}
	if r.Tool == "" {
		inputSchema["queryParams"] = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
		inputSchema["headers"] = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	}
	info := map[string]any{"input": input}
	output := map[string]any{"type": "json"}
	if len(r.OutputExample) > 0 {
		output["example"] = r.OutputExample
	}
	info["output"] = output
	schema := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "object",
		"properties": map[string]any{
			"input": map[string]any{
				"type": "object", "properties": inputSchema, "required": required, "additionalProperties": false,
			},
			"output": map[string]any{
				"type":       "object",
				"properties": map[string]any{"type": map[string]any{"type": "string"}, "format": map[string]any{"type": "string"}, "example": map[string]any{}},
				"required":   []string{"type"},
			},
		},
		"required": []string{"input"},
	}
	ext := Extension{Info: info, Schema: schema}
	if r.Tool == "" {
		ext.RouteTemplate = r.RouteTemplate
	}
	return ext
}
