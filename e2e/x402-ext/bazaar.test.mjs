// The x402 Bazaar discovery extension of a running verifier, checked with
// @x402/extensions' own code (the package facilitators use to catalog
// resources): a `verifier --http --network testnet` with payments on (a
// stub facilitator that only answers GET /supported: no payment is made
// here) is asked for 402s over REST (the discovery probe, a verification
// past the allowance, a trust record) and over MCP (verify_schema past the
// allowance, get_verification_record), and each extensions.bazaar must pass
//   - validateDiscoveryExtension (info against the entry's own schema),
//   - validateDiscoveryExtensionSpec (the spec's invariants: an MCP entry's
//     toolName and inputSchema, an HTTP entry's method and bodyType),
//   - the schema declareDiscoveryExtension builds for the same tool or
//     route (what the package itself would have declared), and
//   - extractDiscoveryInfo on the payment payload a client would echo,
//     which must keep the tool name and the resource's service metadata
//     (serviceName, tags) through sanitizeResourceServiceMetadata.
// A copy of an MCP entry with toolName renamed to tool must fail the checks
// (the shape this server sent before).
//
// Environment (set by ../../.ci/dropin-e2e.sh):
//   VERIFIER_BIN      the built verifier binary
//   VERIFIER_TESTDATA the repo's testdata/ folder (invoice examples)
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  declareDiscoveryExtension,
  extractDiscoveryInfo,
  sanitizeResourceServiceMetadata,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
} from "@x402/extensions/bazaar";
import Ajv2020 from "ajv/dist/2020.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set; run .ci/dropin-e2e.sh`);
  return v;
};
const BIN = env("VERIFIER_BIN");
const TESTDATA = env("VERIFIER_TESTDATA");
const NETWORK = "eip155:84532";
const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";

let facilitator;
let verifier;
let base;
let dataDir;
let log = "";

function listen(server) {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
}

before(async () => {
  // The stub facilitator: what /supported answers for exact payments on
  // Base Sepolia. Nothing here pays, so /verify and /settle are not served.
  facilitator = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/supported") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ kinds: [{ x402Version: 2, scheme: "exact", network: NETWORK }], extensions: [], signers: {} }));
      return;
    }
    res.writeHead(404).end();
  });
  const facPort = await listen(facilitator);
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((r) => probe.close(r));
  dataDir = mkdtempSync(join(tmpdir(), "x402-ext-"));
  base = `http://127.0.0.1:${port}`;
  verifier = spawn(BIN, ["--http", `127.0.0.1:${port}`, "--data-dir", dataDir, "--network", "testnet",
    "--pay-to-evm", PAY_TO, "--facilitator", `http://127.0.0.1:${facPort}`, "--free-per-day", "1"],
  { stdio: ["ignore", "ignore", "pipe"] });
  verifier.stderr.on("data", (d) => { log += d; });
  for (let i = 0; ; i++) {
    if (verifier.exitCode !== null) throw new Error(`the verifier exited:\n${log}`);
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch { /* not listening yet */ }
    if (i > 150) throw new Error(`the verifier did not become ready:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
});

after(async () => {
  if (verifier && verifier.exitCode === null) {
    verifier.kill("SIGTERM");
    await new Promise((r) => verifier.once("exit", r));
  }
  if (facilitator) await new Promise((r) => facilitator.close(r));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const invoice = () => JSON.parse(readFileSync(join(TESTDATA, "invoice-pass.json"), "utf8"));

/** The PaymentRequired of a REST 402, from its Payment-Required header. */
async function rest402(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.equal(res.status, 402, `${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  const header = res.headers.get("payment-required");
  assert.ok(header, `${method} ${path}: no Payment-Required header`);
  return { pr: JSON.parse(Buffer.from(header, "base64").toString("utf8")), body: JSON.parse(text) };
}

/** The PaymentRequired of an MCP payment-required tool result. */
async function mcp402(name, args) {
  const res = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  assert.equal(res.status, 200, `MCP ${name}: HTTP ${res.status}`);
  const { result } = await res.json();
  assert.equal(result?.isError, true, `MCP ${name}: not a payment-required result`);
  assert.ok(result.structuredContent?.accepts?.length, `MCP ${name}: no accepts`);
  return { pr: result.structuredContent, meta: result._meta };
}

/** The package's own checks of one 402's bazaar entry; returns what a facilitator would catalog. */
function checkBazaar(pr, where) {
  const ext = pr.extensions?.bazaar;
  assert.ok(ext, `${where}: no extensions.bazaar`);
  const own = validateDiscoveryExtension(ext);
  assert.ok(own.valid, `${where}: validateDiscoveryExtension: ${JSON.stringify(own.errors)}`);
  const spec = validateDiscoveryExtensionSpec(ext);
  assert.ok(spec.valid, `${where}: validateDiscoveryExtensionSpec: ${JSON.stringify(spec.errors)}`);

  // The schema the package would have declared for this tool or route.
  const input = ext.info.input;
  const declared = input.type === "mcp"
    ? declareDiscoveryExtension({ toolName: input.toolName, description: input.description, transport: input.transport,
      inputSchema: input.inputSchema, example: input.example })
    : declareDiscoveryExtension({
      method: input.method,
      ...(input.bodyType ? { bodyType: input.bodyType, input: input.body } : {}),
      ...(input.pathParams ? { pathParams: input.pathParams, pathParamsSchema: { additionalProperties: { type: "string" } } } : {}),
    });
  const validate = new Ajv2020({ strict: false, allErrors: true }).compile(declared.bazaar.schema);
  assert.ok(validate({ input: ext.info.input }), `${where}: info.input fails the package's declared schema: ${JSON.stringify(validate.errors)}`);

  // What a paying client echoes, as a facilitator extracts it.
  const payload = { x402Version: 2, resource: pr.resource, accepted: pr.accepts[0], payload: {}, extensions: pr.extensions };
  const found = extractDiscoveryInfo(payload, pr.accepts[0]);
  assert.ok(found, `${where}: extractDiscoveryInfo found nothing`);
  assert.deepEqual(sanitizeResourceServiceMetadata(pr.resource), { serviceName: pr.resource.serviceName, tags: pr.resource.tags },
    `${where}: resource metadata does not survive the spec's sanitizing`);
  assert.equal(found.serviceName, "Agent Output Verifier", `${where}: serviceName`);
  assert.ok(found.tags?.length > 0, `${where}: tags`);
  return found;
}

describe("x402 Bazaar discovery, checked with @x402/extensions", () => {
  test("REST: the discovery probe (POST with no body) of both verify routes", async () => {
    for (const path of ["/verify/schema", "/verify/deliverable"]) {
      const { pr } = await rest402("POST", path);
      const found = checkBazaar(pr, `POST ${path}`);
      assert.equal(found.method, "POST");
      assert.equal(found.discoveryInfo.input.bodyType, "json");
      assert.equal(found.resourceUrl, base + path);
    }
  });

  test("REST: a trust record (GET, a route template)", async () => {
    const { pr } = await rest402("GET", "/score/seller-7");
    const found = checkBazaar(pr, "GET /score");
    assert.equal(found.method, "GET");
    assert.equal(found.routeTemplate, "/score/:agent_id");
    assert.equal(found.resourceUrl, `${base}/score/:agent_id`);
  });

  test("MCP: get_verification_record and, past the allowance, verify_schema; REST past the allowance too", async () => {
    const record = await mcp402("get_verification_record", { agent_id: "seller-7" });
    const r = checkBazaar(record.pr, "MCP get_verification_record");
    assert.equal(r.toolName, "get_verification_record");
    assert.equal(r.resourceUrl, `${base}/mcp`);

    // The one free call of the day, then the 402 on both transports.
    const free = await fetch(`${base}/verify/schema`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(invoice()) });
    assert.equal(free.status, 200, "the free call");
    const verify = await mcp402("verify_schema", invoice());
    const v = checkBazaar(verify.pr, "MCP verify_schema");
    assert.equal(v.toolName, "verify_schema");
    assert.equal(v.discoveryInfo.input.transport, "streamable-http");
    assert.equal(verify.meta?.code, "free_trial_exhausted");
    const { pr, body } = await rest402("POST", "/verify/schema", invoice());
    checkBazaar(pr, "POST /verify/schema past the allowance");

    // free_trial reads the same over REST and MCP, as the hosted body has it.
    for (const ft of [body.free_trial, verify.meta?.free_trial]) {
      assert.equal(ft.launch, true);
      assert.equal(ft.client, "identified by request IP address; the same address's REST and MCP verification calls share one allowance");
      assert.equal(ft.message, `Free during launch. This client's 1 free checks for today are used up (REST and MCP share them); they reset at ${ft.resets_at}. Payment applies until then.`);
    }
  });

  test("an MCP entry that says tool instead of toolName is refused", async () => {
    const { pr } = await mcp402("get_verification_record", { agent_id: "seller-7" });
    const tampered = JSON.parse(JSON.stringify(pr).replaceAll('"toolName"', '"tool"'));
    assert.throws(() => checkBazaar(tampered, "tampered"), /toolName/);
    assert.equal(validateDiscoveryExtensionSpec(tampered.extensions.bazaar).valid, false);
  });
});
