package contract_test

import (
	"encoding/json"
	"testing"

	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// TestToolContracts: every tool has a distinct name Lookup finds, input and
// answer schemas that are JSON Schemas (defaults valid), and an example, if
// any, that its input schema accepts.
func TestToolContracts(t *testing.T) {
	tools := contract.Tools()
	if len(tools) != 3 {
		t.Fatalf("Tools() lists %d tools, want 3", len(tools))
	}
	seen := map[string]bool{}
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			if tool.Name == "" || seen[tool.Name] {
				t.Fatalf("tool name %q is empty or repeated", tool.Name)
			}
			seen[tool.Name] = true
			if got, ok := contract.Lookup(tool.Name); !ok || got.Name != tool.Name {
				t.Errorf("Lookup(%q) = %q, %t", tool.Name, got.Name, ok)
			}
			input := testkit.ResolveSchema(t, tool.Input)
			testkit.ResolveSchema(t, tool.Answer)
			if tool.Example == nil {
				return
			}
			var example any
			if err := json.Unmarshal(tool.Example, &example); err != nil {
				t.Fatalf("the example is not JSON: %v", err)
			}
			if err := input.Validate(example); err != nil {
				t.Errorf("the input schema rejects the example: %v", err)
			}
		})
	}
	if _, ok := contract.Lookup("verify"); ok {
		t.Error(`Lookup("verify") finds a tool`)
	}
}

// TestResultSchema: a tool's MCP output schema is an object schema whose
// branches are the answer, the error object and the refusals given.
func TestResultSchema(t *testing.T) {
	raw := contract.ResultSchema(`say "why"`, contract.RecordAnswer, contract.PaymentRequiredSchema)
	testkit.ResolveSchema(t, raw)
	var s struct {
		Type        string            `json:"type"`
		Description string            `json:"description"`
		AnyOf       []json.RawMessage `json:"anyOf"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || s.Description != `say "why"` || len(s.AnyOf) != 3 || string(s.AnyOf[0]) != contract.RecordAnswer ||
		string(s.AnyOf[2]) != contract.PaymentRequiredSchema {
		t.Errorf("ResultSchema = %.300s", raw)
	}
}
