// x402 v2 payments over MCP, end to end with real clients: the MCP
// TypeScript SDK client (StreamableHTTPClientTransport) calls a running
// `verifier --http --network testnet` whose free allowance is small, and pays
// with PaymentPayloads built by the real x402 client code (@x402/core's
// x402Client with @x402/evm's exact EVM scheme, signing EIP-3009
// authorizations with a viem account), carried in _meta["x402/payment"].
// The verifier checks them with the loopback facilitator of
// ../x402/facilitator.mjs (the SDK's own verification, chain simulated in memory),
// whose GET /log shows every verify and settle it was asked for.
//
// Environment (set by ../../.ci/x402-mcp-e2e.sh, which starts everything):
//   VERIFIER_URL          base URL of the verifier (MCP at /mcp)
//   FACILITATOR_URL       base URL of the facilitator
//   X402_PAYER_KEY        the payer's private key (0x + 64 hex; never printed)
//   VERIFIER_PAY_TO       the verifier's --pay-to-evm address
//   VERIFIER_FREE_PER_DAY the verifier's --free-per-day (at least 1)
//   VERIFIER_TESTDATA     the repo's testdata/ folder (invoice examples)
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set; run .ci/x402-mcp-e2e.sh`);
  return v;
};
const VERIFIER = env("VERIFIER_URL").replace(/\/$/, "");
const FACILITATOR = env("FACILITATOR_URL").replace(/\/$/, "");
const PAY_TO = env("VERIFIER_PAY_TO");
const FREE = Number(env("VERIFIER_FREE_PER_DAY"));
const TESTDATA = env("VERIFIER_TESTDATA");
const account = privateKeyToAccount(env("X402_PAYER_KEY"));
if (!Number.isInteger(FREE) || FREE < 1) throw new Error("VERIFIER_FREE_PER_DAY must be a positive integer");

// What --network testnet offers (payment/config.go, Base Sepolia USDC) at the
// default prices (SPEC §7: 0.02 USDC a verification, 0.01 a record).
const NETWORK = "eip155:84532";
const USDC_SEPOLIA = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const PRICE_VERIFY = "20000";
const PRICE_RECORD = "10000";
const OTHER_PAYEE = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

const invoice = (name) => JSON.parse(readFileSync(join(TESTDATA, name), "utf8"));
const agent = `x402-mcp-seller-${Date.now()}`;
const passArgs = { ...invoice("invoice-pass.json"), agent_id: agent };
const failArgs = { ...invoice("invoice-fail.json"), agent_id: agent };
// Invalid requests, and the fields their 422 names: one the engine rejects
// while decoding the request, one only compiling expected_schema finds.
const invalidCases = [
  [{ task_id: "t", expected_schema: {}, submitted_output: 1, rules: [{ type: "sum", field: "a" }], agent_id: agent }, ["rules[0].type"]],
  [{ task_id: "t", expected_schema: { type: "object", properties: { n: { type: 5 } } }, submitted_output: { n: 1 }, agent_id: agent },
    ["expected_schema.properties.n.type"]],
];

// The real x402 client: the exact EVM scheme on every eip155 network.
const payer = new x402Client();
registerExactEvmScheme(payer, { signer: account });

/** The reputation of the test's agent over REST (free): verdicts stored. */
async function verdicts() {
  const res = await fetch(`${VERIFIER}/reputation/${encodeURIComponent(agent)}`);
  assert.equal(res.status, 200, `GET /reputation: ${res.status}`);
  const rep = await res.json();
  return { total: rep.total, passed: rep.passed, failed: rep.failed };
}

/** What the facilitator was asked so far: [{op, isValid|success, reason}]. */
async function facilitatorLog() {
  const res = await fetch(`${FACILITATOR}/log`);
  assert.equal(res.status, 200, `facilitator GET /log: ${res.status}`);
  return res.json();
}

/** The entries the facilitator logged since an earlier length. */
async function facilitatorSince(n) {
  return (await facilitatorLog()).slice(n);
}

const meta = (payload) => ({ "x402/payment": payload });

/**
 * Asserts an x402 payment-required tool result (x402-notes §4): isError,
 * the PaymentRequired as structuredContent and as the JSON text of
 * content[0], offering tool's price on Base Sepolia to PAY_TO; _meta carries
 * code. Returns the PaymentRequired.
 */
function assertPaymentRequired(result, { tool, amount, code }) {
  assert.equal(result.isError, true, "a payment-required result is an error result");
  const pr = result.structuredContent;
  assert.ok(pr, "no structuredContent");
  assert.equal(pr.x402Version, 2);
  assert.equal(typeof pr.error, "string");
  assert.deepEqual(JSON.parse(result.content[0].text), pr, "content[0].text is not the PaymentRequired");
  assert.equal(pr.resource.url, `${VERIFIER}/mcp`);
  assert.equal(pr.accepts.length, 1);
  assert.deepEqual(pr.accepts[0], {
    scheme: "exact", network: NETWORK, amount, asset: USDC_SEPOLIA, payTo: PAY_TO,
    maxTimeoutSeconds: pr.accepts[0].maxTimeoutSeconds, extra: { name: "USDC", version: "2" },
  });
  assert.ok(pr.accepts[0].maxTimeoutSeconds > 0);
  const input = pr.extensions?.bazaar?.info?.input;
  assert.equal(input?.type, "mcp");
  assert.equal(input?.toolName, tool);
  assert.equal(result._meta?.code, code, `_meta.code of ${JSON.stringify(result._meta)}`);
  assert.equal(result._meta?.error?.charged, false);
  assert.equal(result._meta?.["x402/payment-response"], undefined);
  return pr;
}

/** Asserts a paid answer's _meta["x402/payment-response"] (a SettlementResponse). */
function assertSettled(result) {
  assert.notEqual(result.isError, true, `paid call refused: ${JSON.stringify(result._meta)} ${result.content?.[0]?.text?.slice(0, 300)}`);
  const sr = result._meta?.["x402/payment-response"];
  assert.ok(sr, `no x402/payment-response in _meta ${JSON.stringify(result._meta)}`);
  assert.equal(sr.success, true);
  assert.match(sr.transaction, /^0x[0-9a-f]{64}$/);
  assert.equal(sr.network, NETWORK);
  assert.equal(sr.payer.toLowerCase(), account.address.toLowerCase());
  return sr;
}

describe("x402 v2 over MCP: TS SDK client paying with the x402 client libraries", () => {
  let client;
  let verifyPR; // verify_schema's PaymentRequired, as last received

  before(async () => {
    client = new Client({ name: "verifier-x402-mcp-e2e", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${VERIFIER}/mcp`)));
    // Caches the tools' output schemas: callTool then checks every
    // structuredContent against them.
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    assert.ok(names.includes("verify_schema") && names.includes("get_verification_record"), `tools: ${names}`);
  });
  after(async () => {
    await client?.close();
  });

  test("verify_schema is free within the allowance", async () => {
    for (let i = 0; i < FREE; i++) {
      const r = await client.callTool({ name: "verify_schema", arguments: passArgs });
      assert.notEqual(r.isError, true, `free call ${i + 1}: ${r.content?.[0]?.text}`);
      assert.equal(r.structuredContent.result, "pass");
      assert.equal(r._meta?.["x402/payment-response"], undefined, "a free answer carries a payment response");
    }
    assert.deepEqual(await verdicts(), { total: FREE, passed: FREE, failed: 0 });
  });

  test("past the allowance: the x402 payment-required result, free_trial_exhausted, no work", async () => {
    const before = await verdicts();
    const logLength = (await facilitatorLog()).length;
    const r = await client.callTool({ name: "verify_schema", arguments: passArgs });
    verifyPR = assertPaymentRequired(r, { tool: "verify_schema", amount: PRICE_VERIFY, code: "free_trial_exhausted" });
    assert.equal(r._meta.error.code, "payment_required");
    assert.equal(r._meta.free_trial.available, false);
    assert.equal(r._meta.free_trial.remaining_calls_today, 0);
    assert.equal(r._meta.free_trial.calls_per_client_per_day, FREE);
    assert.deepEqual(await verdicts(), before);
    assert.deepEqual(await facilitatorSince(logLength), []);
  });

  let paidPayload;
  let paidResult;
  test("a real PaymentPayload in _meta[\"x402/payment\"]: verified, served, settled", async () => {
    paidPayload = await payer.createPaymentPayload(verifyPR);
    assert.equal(paidPayload.x402Version, 2);
    assert.deepEqual(paidPayload.accepted, verifyPR.accepts[0]);
    assert.equal(paidPayload.payload.authorization.from.toLowerCase(), account.address.toLowerCase());
    assert.equal(paidPayload.payload.authorization.value, PRICE_VERIFY);
    const before = await verdicts();
    const logLength = (await facilitatorLog()).length;
    const r = await client.callTool({ name: "verify_schema", arguments: passArgs, _meta: meta(paidPayload) });
    assertSettled(r);
    paidResult = r;
    assert.equal(r.structuredContent.result, "pass");
    assert.equal(r.structuredContent.agent_id, agent);
    assert.deepEqual(await verdicts(), { ...before, total: before.total + 1, passed: before.passed + 1 });
    assert.deepEqual(await facilitatorSince(logLength), [
      { op: "verify", isValid: true },
      { op: "settle", success: true },
    ]);
  });

  test("the same payload for the same call gets the kept answer, for another call it is refused, without the facilitator", async () => {
    const before = await verdicts();
    const logLength = (await facilitatorLog()).length;
    const again = await client.callTool({ name: "verify_schema", arguments: passArgs, _meta: meta(paidPayload) });
    assertSettled(again);
    assert.deepEqual(again.structuredContent, paidResult.structuredContent, "the kept answer differs");
    assert.deepEqual(again._meta["x402/payment-response"], paidResult._meta["x402/payment-response"]);
    const r = await client.callTool({ name: "verify_schema", arguments: { ...passArgs, task_id: "another-task" }, _meta: meta(paidPayload) });
    assertPaymentRequired(r, { tool: "verify_schema", amount: PRICE_VERIFY, code: "payment_replayed" });
    assert.deepEqual(await verdicts(), before, "the replay was verified again");
    const asked = await facilitatorSince(logLength);
    assert.deepEqual(asked, [], `the facilitator was asked about a used payment: ${JSON.stringify(asked)}`);
  });

  test("a fail verdict is charged like a pass", async () => {
    const before = await verdicts();
    const logLength = (await facilitatorLog()).length;
    const payload = await payer.createPaymentPayload(verifyPR);
    const r = await client.callTool({ name: "verify_schema", arguments: failArgs, _meta: meta(payload) });
    assertSettled(r);
    assert.equal(r.structuredContent.result, "fail");
    assert.ok(r.structuredContent.hints.length > 0);
    assert.deepEqual(await verdicts(), { ...before, total: before.total + 1, failed: before.failed + 1 });
    assert.deepEqual(await facilitatorSince(logLength), [
      { op: "verify", isValid: true },
      { op: "settle", success: true },
    ]);
  });

  test("an invalid request is never charged, with or without a payment", async () => {
    const before = await verdicts();
    const logLength = (await facilitatorLog()).length;
    const unused = await payer.createPaymentPayload(verifyPR);
    for (const [args, fields] of invalidCases) {
      for (const m of [undefined, meta(unused)]) {
        const r = await client.callTool({ name: "verify_schema", arguments: args, _meta: m });
        const what = `${fields} with${m ? "" : "out"} a payment: ${JSON.stringify(r.structuredContent).slice(0, 200)}`;
        assert.equal(r.isError, true, what);
        assert.equal(r.structuredContent.code, "invalid_request", what);
        assert.equal(r.structuredContent.status, 422);
        assert.equal(r.structuredContent.charged, false);
        assert.deepEqual(r.structuredContent.fields.map((f) => f.field), fields);
        assert.equal(r._meta?.["x402/payment-response"], undefined);
      }
    }
    assert.deepEqual(await verdicts(), before);
    assert.deepEqual(await facilitatorSince(logLength), [], "the facilitator was asked about an invalid request's payment");
    // The payment sent with the invalid request was not used: it still pays.
    const r = await client.callTool({ name: "verify_schema", arguments: passArgs, _meta: meta(unused) });
    assertSettled(r);
  });

  test("payments for another payee or amount, forged, or base64-encoded are refused unserved", async () => {
    const forged = await payer.createPaymentPayload(verifyPR);
    forged.payload.authorization.nonce = `0x${randomBytes(32).toString("hex")}`; // the signature no longer holds
    const cases = [
      ["another payee", await payer.createPaymentPayload({ ...verifyPR, accepts: [{ ...verifyPR.accepts[0], payTo: OTHER_PAYEE }] }), false],
      ["another amount", await payer.createPaymentPayload({ ...verifyPR, accepts: [{ ...verifyPR.accepts[0], amount: "1" }] }), false],
      ["a forged signature", forged, true],
      ["the HTTP header's base64", Buffer.from(JSON.stringify(await payer.createPaymentPayload(verifyPR))).toString("base64"), false],
    ];
    for (const [name, payload, facilitatorAsked] of cases) {
      const before = await verdicts();
      const logLength = (await facilitatorLog()).length;
      const r = await client.callTool({ name: "verify_schema", arguments: passArgs, _meta: meta(payload) });
      assertPaymentRequired(r, { tool: "verify_schema", amount: PRICE_VERIFY, code: "payment_invalid" });
      assert.deepEqual(await verdicts(), before, `${name}: work was done`);
      const asked = await facilitatorSince(logLength);
      if (facilitatorAsked) {
        assert.deepEqual(asked, [{ op: "verify", isValid: false, reason: "invalid_exact_evm_signature" }], name);
      } else {
        assert.deepEqual(asked, [], `${name}: the facilitator was asked`);
      }
    }
  });

  test("get_verification_record: paid for every agent, an unknown one too", async () => {
    const unknownArgs = { agent_id: `${agent}-unknown` };
    const unknown = await client.callTool({ name: "get_verification_record", arguments: unknownArgs });
    const unknownPR = assertPaymentRequired(unknown, { tool: "get_verification_record", amount: PRICE_RECORD, code: "payment_required" });
    const unknownPaid = await client.callTool({
      name: "get_verification_record", arguments: unknownArgs, _meta: meta(await payer.createPaymentPayload(unknownPR)),
    });
    assertSettled(unknownPaid);
    assert.equal(unknownPaid.structuredContent.has_history, false);

    const logLength = (await facilitatorLog()).length;
    const unpaid = await client.callTool({ name: "get_verification_record", arguments: { agent_id: agent } });
    const recordPR = assertPaymentRequired(unpaid, { tool: "get_verification_record", amount: PRICE_RECORD, code: "payment_required" });
    assert.deepEqual(await facilitatorSince(logLength), []);

    // A payment made for verify_schema's price does not buy a record.
    const wrongPrice = await payer.createPaymentPayload(verifyPR);
    const refused = await client.callTool({ name: "get_verification_record", arguments: { agent_id: agent }, _meta: meta(wrongPrice) });
    assertPaymentRequired(refused, { tool: "get_verification_record", amount: PRICE_RECORD, code: "payment_invalid" });

    const payload = await payer.createPaymentPayload(recordPR);
    assert.equal(payload.accepted.amount, PRICE_RECORD);
    const paid = await client.callTool({ name: "get_verification_record", arguments: { agent_id: agent }, _meta: meta(payload) });
    assertSettled(paid);
    const rec = paid.structuredContent;
    assert.equal(rec.agent_id, agent);
    assert.equal(rec.has_history, true);
    assert.deepEqual(
      { total: rec.inputs.total, passed: rec.inputs.passed, failed: rec.inputs.failed },
      await verdicts(),
    );

    const n = (await facilitatorLog()).length;
    const again = await client.callTool({ name: "get_verification_record", arguments: { agent_id: agent }, _meta: meta(payload) });
    assertSettled(again);
    assert.deepEqual(again.structuredContent, paid.structuredContent, "the kept record differs");
    assert.deepEqual(await facilitatorSince(n), [], "the facilitator was asked about a used record payment");

    const m = (await facilitatorLog()).length;
    const invalid = await client.callTool({ name: "get_verification_record", arguments: { agent_id: "" }, _meta: meta(await payer.createPaymentPayload(recordPR)) });
    assert.equal(invalid.isError, true);
    assert.equal(invalid.structuredContent.code, "invalid_request");
    assert.equal(invalid.structuredContent.charged, false);
    assert.deepEqual(await facilitatorSince(m), [], "the facilitator was asked about an invalid record request's payment");
  });
});
