// The agent card of a running verifier, as @a2a-js/sdk (the A2A project's
// JavaScript SDK) loads it: its card resolver fetches
// /.well-known/agent-card.json, its A2A 0.3 compatibility parser reads the
// card's 0.3 members (url, preferredTransport, additionalInterfaces) into the
// same interfaces, and its client factory picks an interface by binding.
//
// The service serves no A2A JSON-RPC or HTTP+JSON binding (the only two the
// SDK ships transports for), only custom bindings named by URI: MCP
// streamable HTTP at /mcp and its REST routes. So the SDK's default client
// factory cannot make a client ("No compatible transport found"), which the
// test asserts, and a factory given a transport for the MCP binding makes
// one bound to /mcp, which shows the card's binding entries are what the
// SDK selects on. The test's transport only records the URL it was given:
// making A2A calls over MCP is no part of the SDK.
//
// Environment (set by ../../.ci/dropin-e2e.sh):
//   VERIFIER_BIN  the built verifier binary
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver } from "@a2a-js/sdk/client";
import { isLegacyAgentCard, parseLegacyAgentCard } from "@a2a-js/sdk/compat/v0_3/client";

const BIN = process.env.VERIFIER_BIN;
if (!BIN) throw new Error("VERIFIER_BIN is not set; run .ci/dropin-e2e.sh");

// The card's binding URIs (tools/card.go).
const BINDING_MCP = "https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http";
const BINDING_REST = "urn:json-schema-verifier:binding:rest:v1";
const ATTESTATION = "urn:json-schema-verifier:extension:attestation:";

let verifier;
let base;
let dataDir;
let log = "";

before(async () => {
  const probe = createServer();
  const port = await new Promise((r) => probe.listen(0, "127.0.0.1", () => r(probe.address().port)));
  await new Promise((r) => probe.close(r));
  dataDir = mkdtempSync(join(tmpdir(), "a2a-e2e-"));
  base = `http://127.0.0.1:${port}`;
  verifier = spawn(BIN, ["--http", `127.0.0.1:${port}`, "--data-dir", dataDir], { stdio: ["ignore", "ignore", "pipe"] });
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
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The interfaces as "binding url" strings, sorted, without repeats. */
const pairs = (interfaces) => [...new Set(interfaces.map((i) => `${i.protocolBinding} ${i.url}`))].sort();

/** Asserts the attestation extension publishes at least one Ed25519 key. */
function assertAttestation(card, where) {
  const ext = card.capabilities?.extensions?.find((e) => e.uri.startsWith(ATTESTATION));
  assert.ok(ext, `${where}: no attestation extension`);
  assert.ok(ext.params.publicKeys.length > 0, `${where}: no public keys`);
  for (const k of ext.params.publicKeys) {
    assert.equal(k.algorithm, "Ed25519");
    assert.equal(k.publicKeyEncoding, "base64 of the raw 32-byte Ed25519 public key");
    assert.equal(Buffer.from(k.publicKey, "base64").length, 32);
  }
}

describe("the agent card with @a2a-js/sdk", () => {
  test("the card resolver loads it at both well-known paths, as an A2A 1.0 card", async () => {
    for (const [resolver, path] of [
      [new DefaultAgentCardResolver(), undefined],
      [new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }), undefined],
      [new DefaultAgentCardResolver(), "/.well-known/agent.json"],
    ]) {
      const card = await resolver.resolve(base, path);
      assert.equal(card.name, "Agent Output Verifier");
      assert.deepEqual(pairs(card.supportedInterfaces), [`${BINDING_MCP} ${base}/mcp`, `${BINDING_REST} ${base}`].sort());
      for (const i of card.supportedInterfaces) assert.equal(i.protocolVersion, "1.0");
      assert.ok(card.skills.length >= 3 && card.skills.every((s) => s.id && s.name && s.description && Array.isArray(s.tags)));
      assertAttestation(card, path ?? "agent-card.json");
    }
  });

  test("an A2A 0.3 reader gets the same interfaces and keys from the 0.3 members", async () => {
    const raw = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
    assert.equal(raw.protocolVersion, "0.3.0");
    const { supportedInterfaces, ...v03 } = raw;
    assert.equal(isLegacyAgentCard(v03), true, "without supportedInterfaces the SDK reads the card as 0.3");
    const parsed = parseLegacyAgentCard(v03);
    assert.deepEqual(pairs(parsed.supportedInterfaces), pairs(supportedInterfaces));
    assert.equal(parsed.supportedInterfaces[0].url, `${base}/mcp`);
    assert.equal(parsed.supportedInterfaces[0].protocolBinding, BINDING_MCP);
    assertAttestation(parsed, "the 0.3 reading");
  });

  test("the default client factory has no transport for the card's bindings", async () => {
    await assert.rejects(new ClientFactory().createFromUrl(base), /No compatible transport found, available transports: JSONRPC,HTTP\+JSON/);
  });

  test("a client factory given a transport for the MCP binding binds the client to /mcp", async () => {
    const created = [];
    const mcpBinding = {
      get protocolName() { return BINDING_MCP; },
      async create(url, card) {
        created.push({ url, name: card.name });
        return { protocolVersion: "1.0" };
      },
    };
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [mcpBinding] }));
    const client = await factory.createFromUrl(base);
    assert.deepEqual(created, [{ url: `${base}/mcp`, name: "Agent Output Verifier" }]);
    const card = await client.getAgentCard();
    assertAttestation(card, "client.getAgentCard()");
  });
});
