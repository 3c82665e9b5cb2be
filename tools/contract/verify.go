package contract

// VerifySchemaInput is the verification request of SPEC §1 as a JSON
// Schema. expected_schema and submitted_output take any JSON value; the
// engine checks them, with errors that say what to fix.
const VerifySchemaInput = `{"type":"object","additionalProperties":false,` +
	`"description":"A verification request (SPEC §1). Unknown members are rejected; the body must be I-JSON (no duplicate keys, integers within ±2^53). null means \"not set\" for every optional member (request fields, rule members, bound members), so the canonical \"as parsed\" form of a request is itself a valid request.",` +
	`"required":["task_id","expected_schema","submitted_output"],"properties":{` +
	`"task_id":{"type":"string","minLength":1,"maxLength":200,"description":"your id for this piece of work"},` +
	`"agent_id":{"anyOf":[{"type":"string","minLength":1,"maxLength":200},{"type":"null"}],"default":null,"description":"who produced the output (e.g. the seller); its verdicts build its reputation (ids starting with test- stay out of it). null: no agent"},` +
	`"expected_schema":{"description":"the JSON Schema the output must satisfy: an object or boolean, draft 2020-12 unless $schema names draft-07. A $ref may not leave the document (nothing is fetched)"},` +
	`"submitted_output":{"description":"the output under test: any JSON value (null is a value)"},` +
	`"strict_content_check":{"anyOf":[{"type":"boolean"},{"type":"null"}],"default":false,"description":"content findings (blank or placeholder strings such as TODO, fields the schema does not declare) block the result instead of warning"},` +
	`"bounds":{"anyOf":[{"type":"object","additionalProperties":` + boundInput + `},{"type":"null"}],"default":null,"description":"ranges: path (e.g. total, line_items[].quantity, issued) -> {min, max, if_present}; min/max are numbers or ISO 8601 dates"},` +
	`"rules":{"anyOf":[{"type":"array","items":` + ruleInput + `},{"type":"null"}],"default":null,"description":"cross-field rules, e.g. {\"type\":\"sum_equals\",\"field\":\"line_items[].line_total\",\"equals_field\":\"total\",\"tolerance\":0.01}"},` +
	`"enforce_rules":{"anyOf":[{"type":"boolean"},{"type":"null"}],"default":false,"description":"rule violations block the result instead of warning"},` +
	`"detail":{"anyOf":[{"type":"string","enum":["full","compact"]},{"type":"null"}],"default":"full","description":"full: hints, flags, errors and ratios; compact: the verdict, hashes and signature only"}}}`

const boundInput = `{"type":"object","additionalProperties":false,` +
	`"description":"every value at the path lies in [min, max]: numbers, or ISO 8601 dates / date-times compared chronologically. At least one of min and max",` +
	`"properties":{` +
	`"min":{"anyOf":[{"type":"number"},{"type":"string"},{"type":"null"}],"description":"lowest allowed value: a number, or an ISO 8601 date / date-time"},` +
	`"max":{"anyOf":[{"type":"number"},{"type":"string"},{"type":"null"}],"description":"highest allowed value: a number, or an ISO 8601 date / date-time"},` +
	`"if_present":{"anyOf":[{"type":"boolean"},{"type":"null"}],"default":false,"description":"skip the bound when the path resolves to nothing"}}}`

const ruleInput = `{"type":"object","additionalProperties":false,"required":["type","field"],` +
	`"description":"a cross-field rule: sum_equals (equals_field or equals), gte/lte (other_field or value), exists_in (in_field or values), unique. A member that does not apply to the rule type is accepted when null",` +
	`"properties":{` +
	`"type":{"type":"string","enum":["sum_equals","gte","lte","exists_in","unique"]},` +
	`"field":{"type":"string","description":"path of the checked values, e.g. line_items[].line_total"},` +
	`"equals_field":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"sum_equals: path of the expected sum (or give equals)"},` +
	`"equals":{"anyOf":[{"type":"number"},{"type":"null"}],"description":"sum_equals: the expected sum (or give equals_field)"},` +
	`"other_field":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"gte/lte: path of the value to compare with (or give value)"},` +
	`"value":{"anyOf":[{"type":"number"},{"type":"null"}],"description":"gte/lte: the number to compare with (or give other_field)"},` +
	`"in_field":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"exists_in: path of the allowed values (or give values)"},` +
	`"values":{"anyOf":[{"type":"array"},{"type":"null"}],"description":"exists_in: the allowed values (or give in_field)"},` +
	`"tolerance":{"anyOf":[{"type":"number","minimum":0},{"type":"null"}],"default":1e-9,"description":"allowed difference, for sum_equals (|sum - expected| <= tolerance), gte (field >= other - tolerance) and lte (field <= other + tolerance); exists_in and unique ignore it"},` +
	`"if_present":{"anyOf":[{"type":"boolean"},{"type":"null"}],"default":false,"description":"skip the rule when field resolves to nothing"}}}`

// VerifyAnswer is the signed verification answer of SPEC §4. A compact answer has only
// the required members.
const VerifyAnswer = `{"type":"object","title":"answer","description":"The signed verification answer; the whole object is the receipt.",` +
	`"required":["summary","next_actions","result","verification_id","task_id","agent_id","output_hash","schema_hash","rules_hash",` +
	`"verified_at","verifier_version","enforce_rules","strict_content_check","verify","attestation"],"properties":{` +
	`"summary":{"type":"object","required":["result","blocking_checks"],"properties":{"result":{"type":"string","enum":["pass","fail"]},"blocking_checks":` + stringsArray + `}},` +
	`"next_actions":` + nextActionsSchema + `,` +
	`"result":{"type":"string","enum":["pass","fail"]},` +
	`"verification_id":{"type":"string","description":"UUIDv4 of this verification"},` +
	`"task_id":{"type":"string"},"agent_id":` + nullableString + `,` +
	`"output_hash":` + hashSchema + `,"schema_hash":` + hashSchema + `,"rules_hash":` + hashSchema + `,"request_hash":` + hashSchema + `,` +
	`"verified_at":` + timeSchema + `,"verifier_version":{"type":"string"},` +
	`"enforce_rules":{"type":"boolean"},"strict_content_check":{"type":"boolean"},` +
	`"errors":` + stringsArray + `,"errors_total":` + countSchema + `,"errors_omitted":` + countSchema + `,` +
	`"errors_detail":{"type":"array","items":{"type":"object","required":["check","path","expected","found","message"],"properties":{` +
	`"check":{"type":"string"},"path":{"type":"string"},"expected":{"type":"string"},"found":{"type":"string"},"message":{"type":"string"}}}},` +
	`"errors_detail_total":` + countSchema + `,"errors_detail_omitted":` + countSchema + `,` +
	`"flags":{"type":"array","items":{"type":"object","required":["check","field","severity","detail"],"properties":{` +
	`"check":{"type":"string"},"field":{"type":"string"},"severity":{"type":"string","enum":["error","warning"]},"detail":{"type":"string"}}}},` +
	`"flags_total":` + countSchema + `,"flags_omitted":` + countSchema + `,` +
	`"hints":{"type":"array","description":"every failed check, enough to repair the output","items":{"type":"object","required":["source","check","path","expected","found"],"properties":{` +
	`"source":{"type":"string","enum":["schema","integrity"]},"check":{"type":"string"},"path":{"type":"string"},"expected":{"type":"string"},"found":{"type":"string"}}}},` +
	`"hints_total":` + countSchema + `,"hints_omitted":` + countSchema + `,` +
	`"schema_compliance":` + ratioSchema + `,"integrity_checks":` + ratioSchema + `,"overall":` + ratioSchema + `,` +
	`"verify":` + verifyBlockSchema + `,"attestation":` + attestationSchema + `}}`

// VerifySchemaExample is verify_schema's example request, which llms.txt,
// the OpenAPI document and the x402 bazaar description show: an invoice
// whose line totals must add up.
const VerifySchemaExample = `{
  "task_id": "invoice-42",
  "agent_id": "seller-7",
  "expected_schema": {
    "type": "object",
    "required": ["invoice_id", "line_items", "total"],
    "properties": {
      "invoice_id": {"type": "string", "minLength": 1},
      "line_items": {"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["sku", "line_total"],
        "properties": {"sku": {"type": "string"}, "line_total": {"type": "number", "minimum": 0}}}},
      "total": {"type": "number"}
    }
  },
  "submitted_output": {
    "invoice_id": "INV-2026-0042",
    "line_items": [{"sku": "A-1", "line_total": 100.0}, {"sku": "B-2", "line_total": 35.0}],
    "total": 135.0
  },
  "rules": [{"type": "sum_equals", "field": "line_items[].line_total", "equals_field": "total", "tolerance": 0.005}],
  "enforce_rules": true
}`
