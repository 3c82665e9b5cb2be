// The MCP Inspector CLI (v2, `--cli`) against the built verifier, over stdio
// and over streamable HTTP: tools/list with --strict schema portability
// (zero errors), verify_schema pass and fail, an isError result for invalid
// arguments (exit 5), verify_receipt and get_verification_record.
//
// Environment: VERIFIER_BIN, VERIFIER_HTTP_URL, VERIFIER_TESTDATA (see
// sdk-client.test.mjs).
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set; run .ci/mcp-e2e.sh`);
  return v;
};
const BIN = env("VERIFIER_BIN");
const HTTP_URL = env("VERIFIER_HTTP_URL");
const TESTDATA = env("VERIFIER_TESTDATA");
const INSPECTOR = join(import.meta.dirname, "node_modules", ".bin", "mcp-inspector");

const scratch = mkdtempSync(join(tmpdir(), "verifier-e2e-inspector-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

// Where the inspector finds the server: a command line (then `--` ends the
// server's own flags) or a URL.
const targets = {
  stdio: [BIN, "--data-dir", scratch, "--"],
  http: ["--transport", "http", "--server-url", HTTP_URL],
};

// inspect runs the inspector CLI and resolves with its exit code and output.
function inspect(target, args) {
  return new Promise((resolve) => {
    execFile(INSPECTOR, ["--cli", ...target, ...args], { timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const callTool = (target, name, args) =>
  inspect(target, ["--method", "tools/call", "--tool-name", name, "--tool-args-json", JSON.stringify(args), "--format", "json"]);

function parse(run) {
  assert.equal(run.code, 0, `inspector exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout).result;
}

for (const [mode, target] of Object.entries(targets)) {
  describe(`Inspector CLI v2 over ${mode}`, () => {
    const agent = `e2e-inspector-${mode}-${Date.now()}`;
    let receipt;

    test("tools/list --strict: zero schema-portability errors", async () => {
      const run = await inspect(target, ["--method", "tools/list", "--strict", "--format", "json"]);
      const { tools } = parse(run);
      assert.deepEqual(tools.map((t) => t.name).sort(), ["get_verification_record", "verify_receipt", "verify_schema"]);
      const summary = run.stderr.match(/(\d+) errors?, (\d+) warnings?/);
      assert.ok(summary, `no portability summary on stderr: ${run.stderr}`);
      assert.equal(summary[1], "0", run.stderr);
      // The only warnings are the two arguments that accept any JSON value
      // on purpose: the schema under test and the output under test.
      const warned = [...run.stderr.matchAll(/Path: (\S+)/g)].map((m) => m[1]).sort();
      assert.deepEqual(warned, ["inputSchema.properties.expected_schema", "inputSchema.properties.submitted_output"]);
    });

    test("verify_schema: pass", async () => {
      const request = { ...JSON.parse(readFileSync(join(TESTDATA, "invoice-pass.json"), "utf8")), agent_id: agent };
      const result = parse(await callTool(target, "verify_schema", request));
      assert.equal(result.isError, undefined);
      assert.equal(result.structuredContent.result, "pass");
      receipt = result.structuredContent;
    });

    test("verify_schema: fail", async () => {
      const request = { ...JSON.parse(readFileSync(join(TESTDATA, "invoice-fail.json"), "utf8")), agent_id: agent };
      const result = parse(await callTool(target, "verify_schema", request));
      assert.equal(result.structuredContent.result, "fail");
      assert.ok(result.structuredContent.hints.length > 0);
    });

    test("verify_schema: invalid arguments exit 5 with isError", async () => {
      const run = await callTool(target, "verify_schema", { task_id: "t", expected_schema: {} });
      assert.equal(run.code, 5, `exit ${run.code}: ${run.stderr}`);
      assert.match(run.stderr, /tool_is_error/);
    });

    test("verify_receipt: the receipt just received", async () => {
      const result = parse(await callTool(target, "verify_receipt", { receipt }));
      assert.equal(result.structuredContent.valid, true);
    });

    test("get_verification_record", async () => {
      const result = parse(await callTool(target, "get_verification_record", { agent_id: agent }));
      assert.equal(result.structuredContent.has_history, true);
      assert.equal(result.structuredContent.inputs.total, 2);
    });
  });
}
