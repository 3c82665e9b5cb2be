// Package contract is the one description of each tool the verifier
// serves: its name, the JSON Schema of its input and of its answer, and an
// example input. The MCP adapter (package mcpserver) builds its tool
// definitions from it, the REST adapter (package rest) fills the OpenAPI
// document's components, the x402 bazaar description of a paid route and
// llms.txt's example from it, so a tool's input reads the same wherever it
// is published.
//
// The schemas use only keywords that draft-07 and draft 2020-12 (and so
// OpenAPI 3.1) read alike; see schema.go. The package imports nothing of
// the service: both adapters, and the core, may depend on it.
package contract

import "encoding/json"

// Tool names, as MCP clients call them and as the payment layer names a
// paid tool.
const (
	VerifySchema  = "verify_schema"
	Record        = "get_verification_record"
	VerifyReceipt = "verify_receipt"
)

// Summaries of the paid tools: the resource description of their x402
// payment requirements, over MCP and REST alike.
const (
	VerifySchemaSummary = "Verify an agent's JSON output against a JSON Schema, bounds and cross-field rules; signed receipt."
	RecordSummary       = "An agent's signed trust record: a 0-100 score from its past verdicts."
)

// RecordExample is get_verification_record's example arguments.
const RecordExample = `{"agent_id":"seller-7"}`

// Tool is the contract of one tool.
type Tool struct {
	// Name is the tool's name (VerifySchema, Record or VerifyReceipt).
	Name string
	// Input is the JSON Schema of the tool's arguments, which over REST is
	// the request (a body, or the path parameters).
	Input json.RawMessage
	// Answer is the JSON Schema of a successful answer.
	Answer json.RawMessage
	// Example is a valid input.
	Example json.RawMessage
}

// Tools returns the contract of every tool, in the order of Lookup's
// names: verify_schema, get_verification_record, verify_receipt.
func Tools() []Tool {
	return []Tool{
		{Name: VerifySchema, Input: json.RawMessage(VerifySchemaInput), Answer: json.RawMessage(VerifyAnswer), Example: json.RawMessage(VerifySchemaExample)},
		{Name: Record, Input: json.RawMessage(RecordInput), Answer: json.RawMessage(RecordAnswer), Example: json.RawMessage(RecordExample)},
		{Name: VerifyReceipt, Input: json.RawMessage(VerifyReceiptInput), Answer: json.RawMessage(ReceiptReport)},
	}
}

// Lookup returns the contract of the tool called name.
func Lookup(name string) (Tool, bool) {
	for _, t := range Tools() {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}
