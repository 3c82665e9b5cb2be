package contract

import (
	"encoding/json"
	"strings"
)

// JSON Schema fragments shared by the tools' hand-written input and output
// schemas. They use only keywords that draft-07 and draft 2020-12 read alike
// and name no $schema, so every client's validator (ajv, jsonschema-go, …)
// compiles them as they are; unions are anyOf branches of one type each,
// which model providers' schema subsets accept. Output schemas leave additional properties
// open: answers may grow fields.

const (
	hashSchema   = `{"type":"string","pattern":"^[0-9a-f]{64}$","description":"lowercase hex SHA-256 of RFC 8785 (JCS) canonical JSON"}`
	timeSchema   = `{"type":"string","description":"UTC, RFC 3339 with microseconds and +00:00, e.g. 2026-10-01T01:01:09.606993+00:00"}`
	countSchema  = `{"type":"integer","minimum":0}`
	stringsArray = `{"type":"array","items":{"type":"string"}}`
	// nullableString is a string or null, spelled with anyOf rather than a
	// type array, which some clients' schema dialects cannot express.
	nullableString = `{"anyOf":[{"type":"string"},{"type":"null"}]}`

	nextActionsSchema = `{"type":"array","description":"what to do next, in order","items":{"type":"object","required":["action"],"properties":{` +
		`"action":{"type":"string"},"using":{"type":"string"},"for":{"type":"string"},"fields":` + stringsArray + `}}}`

	ratioSchema = `{"type":"object","required":["ratio","passed","total"],"properties":{` +
		`"ratio":{"type":"number","minimum":0,"maximum":1,"description":"passed/total rounded to 6 decimals; 1 when total is 0"},` +
		`"passed":` + countSchema + `,"total":` + countSchema + `}}`

	verifyBlockSchema = `{"type":"object","description":"how to check the signature offline: public_key_url and mcp name where the key is published (a server with a public URL); without them, public_key is the signing key itself (stdio, the CLI), which proves the receipt intact but not who signed it",` +
		`"required":["key_version","canonicalization","hash_algorithm","service"],"properties":{` +
		`"public_key_url":{"type":"string"},"public_key":{"type":"string","description":"standard base64 of the raw 32-byte Ed25519 public key"},` +
		`"key_version":{"type":"string"},"canonicalization":{"type":"string"},` +
		`"hash_algorithm":{"type":"string"},"service":{"type":"string"},"mcp":{"type":"string"}}}`

	attestationSchema = `{"type":"object","description":"Ed25519 signature over the JCS bytes of {context, algorithm, key_version, attested_at, response: the answer without attestation}",` +
		`"required":["algorithm","key_version","timestamp","signature"],"properties":{` +
		`"algorithm":{"type":"string","enum":["Ed25519"]},"key_version":{"type":"string"},` +
		`"timestamp":` + timeSchema + `,"signature":{"type":"string","description":"standard base64"}}}`

	// errorSchema is the error object of SPEC §6, the structured content of
	// every result with isError set.
	errorSchema = `{"type":"object","title":"error","description":"The call could not be served (isError is true); nothing was charged unless charged is true. fields[] says what to fix.",` +
		`"required":["code","status","retryable","charged","message","next_actions"],"properties":{` +
		`"code":{"type":"string","description":"stable: invalid_request, payload_too_large, not_found, rate_limited, internal_error, unavailable, …"},` +
		`"status":{"type":"integer","description":"the matching HTTP status"},` +
		`"retryable":{"type":"boolean"},"charged":{"enum":[false,true,"unknown"],"description":"unknown: the payment was sent for settlement and no answer came; call again with the same payment to get the kept answer"},"message":{"type":"string"},` +
		`"retry_after":{"type":"integer","minimum":0,"description":"seconds to wait before retrying"},` +
		`"next_actions":` + nextActionsSchema + `,` +
		`"fields":{"type":"array","items":{"type":"object","required":["field","problem","fix"],"properties":{` +
		`"field":{"type":"string"},"problem":{"type":"string"},"fix":{"type":"string"}}}},` +
		`"fields_omitted":{"type":"integer","minimum":1,"description":"how many more problems were found than fields[] lists (it lists the first 20)"},` +
		`"correlation_id":{"type":"string"}}}`
)

// PaymentRequiredSchema is x402 v2's PaymentRequired, the structured
// content of the isError result that asks for payment over HTTP (SPEC §7).
const PaymentRequiredSchema = `{"type":"object","title":"payment required","description":"x402 v2 PaymentRequired (isError is true): pay one of accepts[] and call again with the payment in _meta[\"x402/payment\"]; _meta also carries the error code and free_trial.",` +
	`"required":["x402Version","accepts"],"properties":{"x402Version":{"type":"integer"},"error":{"type":"string"},` +
	`"resource":{"type":"object"},"accepts":{"type":"array","items":{"type":"object"}},"extensions":{"type":"object"}}}`

// ResultSchema is a tool's MCP output schema: its answer or, on a result with
// isError set, the error object or one of the other refusals given. MCP
// requires an object at the root, and clients validate structured content
// whether or not isError is set.
func ResultSchema(description, answer string, refusals ...string) json.RawMessage {
	branches := append([]string{answer, errorSchema}, refusals...)
	return json.RawMessage(`{"type":"object","description":` + quote(description) +
		`,"anyOf":[` + strings.Join(branches, ",") + `]}`)
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Go string always encodes
	}
	return string(b)
}
