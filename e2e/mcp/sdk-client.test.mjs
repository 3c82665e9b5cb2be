// The MCP TypeScript SDK client against the built verifier, over stdio and
// over streamable HTTP: list tools, verify_schema (pass, fail, invalid),
// structured content validated against the advertised output schema with
// ajv (draft-07 and draft 2020-12, strict), verify_receipt on the receipt just
// received, and get_verification_record.
//
// Environment (set by ../../.ci/mcp-e2e.sh):
//   VERIFIER_BIN       the built binary
//   VERIFIER_HTTP_URL  the /mcp URL of a running `verifier --http`
//   VERIFIER_TESTDATA  the repo's testdata/ folder (invoice examples)
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set; run .ci/mcp-e2e.sh`);
  return v;
};
const BIN = env("VERIFIER_BIN");
const HTTP_URL = env("VERIFIER_HTTP_URL");
const TESTDATA = env("VERIFIER_TESTDATA");
const invoice = (name) => JSON.parse(readFileSync(join(TESTDATA, name), "utf8"));

// Two independent validators, strict about the schemas themselves.
const validators = [new Ajv({ strict: true, allErrors: true }), new Ajv2020({ strict: true, allErrors: true })];
for (const ajv of validators) addFormats(ajv);

function checkAgainstOutputSchema(tool, result) {
  assert.ok(tool.outputSchema, `${tool.name} advertises no outputSchema`);
  assert.ok(result.structuredContent, `${tool.name} result has no structuredContent`);
  for (const ajv of validators) {
    const validate = ajv.compile(tool.outputSchema);
    assert.ok(validate(result.structuredContent), `${tool.name}: ${ajv.errorsText(validate.errors)}`);
  }
  // The last text block carries the same JSON for text-only clients.
  const last = result.content.at(-1);
  assert.equal(last.type, "text");
  assert.deepEqual(JSON.parse(last.text), result.structuredContent);
}

const scratch = mkdtempSync(join(tmpdir(), "verifier-e2e-stdio-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const transports = {
  stdio: () => {
    const t = new StdioClientTransport({ command: BIN, args: ["--data-dir", scratch], stderr: "pipe" });
    t.stderr.on("data", () => {}); // the server's logs: drained, not shown
    return t;
  },
  http: () => new StreamableHTTPClientTransport(new URL(HTTP_URL)),
};

for (const [mode, makeTransport] of Object.entries(transports)) {
  describe(`TS SDK client over ${mode}`, () => {
    let client;
    const tools = {};
    const agent = `e2e-seller-${mode}-${Date.now()}`;

    before(async () => {
      client = new Client({ name: "verifier-e2e", version: "0" });
      await client.connect(makeTransport());
    });
    after(async () => {
      await client?.close();
    });

    // Each call goes through the SDK's own callTool, which also validates
    // structuredContent against the cached outputSchema.
    const call = async (name, args) => {
      const result = await client.callTool({ name, arguments: args });
      checkAgainstOutputSchema(tools[name], result);
      return result;
    };

    test("initialize: server info and instructions", () => {
      assert.equal(client.getServerVersion().name, "verifier");
      const instructions = client.getInstructions();
      for (const name of ["verify_schema", "verify_receipt", "get_verification_record"]) {
        assert.match(instructions, new RegExp(name));
      }
    });

    test("tools/list: three tools with schemas and annotations", async () => {
      const { tools: list } = await client.listTools();
      assert.deepEqual(list.map((t) => t.name).sort(), ["get_verification_record", "verify_receipt", "verify_schema"]);
      for (const tool of list) {
        tools[tool.name] = tool;
        assert.equal(tool.inputSchema.type, "object");
        assert.equal(tool.inputSchema.additionalProperties, false);
        assert.equal(tool.outputSchema.type, "object");
        // verify_schema stores a verdict (not read-only, never destructive);
        // the other two only read.
        assert.equal(tool.annotations.readOnlyHint, tool.name !== "verify_schema", `${tool.name} readOnlyHint`);
        assert.equal(tool.annotations.destructiveHint, false, `${tool.name} destructiveHint`);
        assert.equal(tool.annotations.idempotentHint, false);
        assert.equal(tool.annotations.openWorldHint, false);
        for (const ajv of validators) ajv.compile(tool.inputSchema);
      }
    });

    let passReceipt;
    const passRequest = { ...invoice("invoice-pass.json") };

    test("verify_schema: a passing invoice", async () => {
      passRequest.agent_id = agent;
      const result = await call("verify_schema", passRequest);
      assert.equal(result.isError, undefined);
      const answer = result.structuredContent;
      assert.equal(answer.result, "pass");
      assert.deepEqual(answer.summary.blocking_checks, []);
      assert.equal(answer.attestation.algorithm, "Ed25519");
      assert.match(result.content[0].text, /^PASS: /);
      passReceipt = answer;
    });

    test("verify_schema: a failing invoice, with hints", async () => {
      const result = await call("verify_schema", { ...invoice("invoice-fail.json"), agent_id: agent });
      const answer = result.structuredContent;
      assert.equal(answer.result, "fail");
      assert.ok(answer.hints.length > 0);
      assert.deepEqual(answer.next_actions, [{ action: "repair_and_reverify", using: "hints" }]);
      assert.match(result.content[0].text, /^FAIL: /);
      assert.match(result.content[0].text, /Hints \(3 of \d+\):/);
    });

    test("verify_schema: invalid arguments are an isError result with the error object", async () => {
      const result = await call("verify_schema", { task_id: "t", expected_schema: {}, submitted_output: 1, rules: [{ type: "sum", field: "a" }] });
      assert.equal(result.isError, true);
      const err = result.structuredContent;
      assert.equal(err.code, "invalid_request");
      assert.equal(err.status, 422);
      assert.equal(err.charged, false);
      assert.deepEqual(err.fields.map((f) => f.field), ["rules[0].type"]);
    });

    test("verify_receipt: the receipt just received", async () => {
      const result = await call("verify_receipt", { receipt: passReceipt });
      assert.equal(result.structuredContent.valid, true);
      assert.equal(result.structuredContent.attested_result, "pass");
      assert.ok(result.structuredContent.checks.every((c) => c.ok));
    });

    test("verify_receipt: with the original request, hashes recomputed", async () => {
      const result = await call("verify_receipt", { receipt: passReceipt, request: passRequest });
      const report = result.structuredContent;
      assert.equal(report.valid, true);
      assert.equal(report.request_checked, true);
      for (const name of ["output_hash", "schema_hash", "rules_hash", "request_hash", "verdict"]) {
        assert.ok(report.checks.find((c) => c.name === name)?.ok, `${name} check did not hold`);
      }
      assert.deepEqual(report.next_actions, [{ action: "proceed_to_payment", for: "buyer" }]);
    });

    test("verify_receipt: a tampered receipt is not valid", async () => {
      const tampered = { ...passReceipt, task_id: "someone-else" };
      const result = await call("verify_receipt", { receipt: tampered });
      assert.equal(result.isError, undefined);
      assert.equal(result.structuredContent.valid, false);
    });

    test("get_verification_record: the agent just verified, and an unknown one", async () => {
      const known = await call("get_verification_record", { agent_id: agent });
      assert.equal(known.structuredContent.has_history, true);
      assert.equal(known.structuredContent.inputs.total, 2);
      const check = await call("verify_receipt", { receipt: known.structuredContent });
      assert.equal(check.structuredContent.valid, true);
      assert.match(check.structuredContent.context, /trust-score/);
      const unknown = await call("get_verification_record", { agent_id: `${agent}-unknown` });
      assert.equal(unknown.structuredContent.has_history, false);
    });

    test("an unknown tool is a protocol error", async () => {
      await assert.rejects(client.callTool({ name: "nope", arguments: {} }), (err) => err.code === -32602);
    });
  });
}
