// Browser test of the pages for people: the home page at /, the receipt
// checker /check and an agent's record /agents/{agent_id}, against a real
// `verifier --http` process in Debian's Chromium (playwright-core).
//
//   VERIFIER_BIN=/path/to/verifier SCREENSHOT_DIR=/tmp/shots node --test pages.test.mjs
//
// Screenshots of each page at desktop and phone width go to SCREENSHOT_DIR
// (default ./screenshots).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import canonicalize from 'canonicalize';
import { launchBrowser, startServer, stopServer } from './harness.mjs';

const SHOTS = resolve(process.env.SCREENSHOT_DIR || 'screenshots');
const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } };
const RECEIPT_CHECKS = ['JSON', 'Attestation', 'Algorithm', 'Timestamp', 'Key version', 'Public key', 'Signature'];
const HASHES = ['output_hash', 'schema_hash', 'rules_hash', 'request_hash'];
// The hosted service's card as it publishes it, with a fixed test key: the
// Ed25519 key of the seed of 32 bytes 0x68 (testdata/hosted-agent-card.SOURCE).
const HOSTED_CARD = process.env.HOSTED_CARD || resolve(dirname(fileURLToPath(import.meta.url)), '../../testdata/hosted-agent-card.json');
const HOSTED_KEY = { keyVersion: 'v1-2026-11a', seed: Buffer.alloc(32, 0x68).toString('base64') };
const HOSTED_ENCODING = 'base64 of the raw 32-byte Ed25519 public key';
// The transparency log cases the Go tests check with CheckLogInclusion
// (TestLogInclusionVector writes them), for the page's logcheck.js to agree.
const LOG_VECTOR = process.env.LOG_VECTOR || resolve(dirname(fileURLToPath(import.meta.url)), '../../tools/rest/testdata/log-inclusion-vector.json');
// The page's names of the Go side's log checks.
const LOG_CHECKS = { log_proof: 'Log proof', log_checkpoint: 'Log checkpoint', log_entry: 'Log entry', log_inclusion: 'Log inclusion' };

let server;
let browser;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  await stopServer(server);
});

// invoice is a verification request carrying marker (a string that must
// never leave the browser once pasted); total decides pass or fail.
function invoice(marker, agentId, total) {
  return {
    task_id: `task-${marker}`,
    agent_id: agentId,
    expected_schema: {
      type: 'object',
      required: ['invoice_number', 'line_items', 'total'],
      properties: {
        invoice_number: { type: 'string', pattern: '^INV-[0-9]{4}$' },
        line_items: { type: 'array', minItems: 1, items: { type: 'object', required: ['line_total'], properties: { line_total: { type: 'number' } } } },
        total: { type: 'number', minimum: 0 },
        note: { type: 'string' },
      },
    },
    submitted_output: { invoice_number: 'INV-0042', note: marker, line_items: [{ line_total: 75.5 }, { line_total: 60 }], total },
    bounds: { total: { min: 0, max: 10000 } },
    rules: [{ type: 'sum_equals', field: 'line_items[].line_total', equals_field: 'total', tolerance: 0.01 }],
    enforce_rules: true,
  };
}

// verify posts a request as JSON text written with odd spacing (the hashes
// are over the canonical form, not the text) and returns the answer's text.
async function verify(request) {
  const res = await fetch(`${server.base}/verify/schema`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(request, null, 3),
  });
  assert.equal(res.status, 200);
  return res.text();
}

// watch records every request of a browser context: its URL and body.
function watch(context) {
  const seen = [];
  context.on('request', (req) => seen.push({ url: req.url(), body: req.postData() || '' }));
  return seen;
}

function assertStayedHome(seen, what) {
  const outside = seen.filter((r) => !r.url.startsWith(`${server.base}/`) && !r.url.startsWith('data:'));
  assert.deepEqual(outside, [], `${what}: every request went to the server on 127.0.0.1`);
}

function assertNotSent(seen, marker) {
  for (const r of seen) {
    assert.ok(!decodeURIComponent(r.url).includes(marker) && !r.body.includes(marker),
      `a request carried the pasted text: ${r.url}`);
  }
}

// checkWith fills /check and reads back the result: the verdict line, each
// check's state by name and each hash row's match.
async function checkWith(page, { receipt, request = '', keySource = 'server', key = '' }) {
  // The fields are found by their labels, as a screen reader finds them.
  await page.getByRole('textbox', { name: /^Receipt/ }).fill(receipt);
  await page.getByRole('textbox', { name: /^Original request/ }).fill(request);
  await page.locator(`input[name="key-source"][value="${keySource}"]`).check();
  await page.getByRole('textbox', { name: /^Agent card or public key/ }).fill(key);
  await page.getByRole('button', { name: 'Check the receipt' }).click();
  await page.waitForFunction(() => !document.querySelector('#check').disabled && !document.querySelector('#result').hidden);
  const verdict = (await page.locator('#verdict').textContent()).trim();
  const checks = Object.fromEntries(await page.locator('#checks li').evaluateAll((lis) => lis.map((li) => [li.dataset.check, li.dataset.state])));
  const hashes = Object.fromEntries(await page.locator('#hashes tbody tr').evaluateAll((rows) => rows.map((r) => [r.dataset.hash, r.dataset.match])));
  return { verdict, checks, hashes };
}

async function noHorizontalScroll(page, what) {
  const { scroll, client } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert.ok(scroll <= client, `${what} scrolls sideways at phone width (${scroll} > ${client})`);
}

async function screenshots(page, name) {
  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(viewport);
    if (size === 'phone') await noHorizontalScroll(page, name);
    await page.screenshot({ path: join(SHOTS, `${name}-${size}.png`), fullPage: true });
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

test('/ in a browser is the home page, linking the pages and documents', async () => {
  const context = await browser.newContext();
  const seen = watch(context);
  const page = await context.newPage();
  const res = await page.goto(`${server.base}/`);
  assert.equal(res.status(), 200);
  for (const href of ['/check', '/docs', '/llms.txt', '/.well-known/agent-card.json']) {
    assert.equal(await page.locator(`a[href="${href}"]`).count() > 0, true, `the home page links ${href}`);
  }
  await screenshots(page, 'home');
  await context.close();
  assertStayedHome(seen, '/');
  // An API client still gets JSON at /.
  const api = await fetch(`${server.base}/`, { headers: { Accept: 'application/json' } });
  assert.equal(api.status, 404);
  assert.equal(api.headers.get('content-type'), 'application/json');
});

test('/check verifies receipts in the browser and sends nothing pasted', async () => {
  const marker = `marker-${randomUUID()}`;
  const agent = `e2e-check-${randomUUID().slice(0, 8)}`;
  const request = invoice(marker, agent, 135.5);
  const receipt = await verify(request);
  assert.equal(JSON.parse(receipt).result, 'pass');

  const context = await browser.newContext();
  const seen = watch(context);
  const problems = [];
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`); });
  const res = await page.goto(`${server.base}/check`);
  assert.equal(res.status(), 200);
  const loaded = seen.length;

  // A fresh receipt, with this server's keys: valid, every check listed.
  let got = await checkWith(page, { receipt });
  assert.match(got.verdict, /^✓ valid/, got.verdict);
  for (const name of RECEIPT_CHECKS) assert.equal(got.checks[name], 'held', `check ${name}: ${JSON.stringify(got.checks)}`);
  assert.equal(await page.locator('#answer-facts').getByText('pass', { exact: true }).count(), 1, 'the verdict is shown');

  // One character of "result" changed: not valid, and the signature is why.
  const at = receipt.indexOf('"result":"pass","verification_id"');
  assert.ok(at > 0, 'the receipt has its top-level result');
  const tampered = `${receipt.slice(0, at + 10)}f${receipt.slice(at + 11)}`;
  assert.equal(tampered.length, receipt.length);
  got = await checkWith(page, { receipt: tampered });
  // Nor is it what this server's transparency log holds for its id.
  assert.match(got.verdict, /^✗ not valid: Signature, Log entry failed/, got.verdict);
  assert.equal(got.checks.Signature, 'failed');

  // With the request: the four hashes are recomputed and match.
  const requestText = JSON.stringify(request, null, 1);
  got = await checkWith(page, { receipt, request: requestText });
  assert.match(got.verdict, /^✓ valid/, got.verdict);
  for (const h of HASHES) {
    assert.equal(got.hashes[h], 'true', `${h} matches: ${JSON.stringify(got.hashes)}`);
    assert.equal(got.checks[h], 'held', `check ${h}`);
  }
  await screenshots(page, 'check-valid');

  // Another request (one number changed): the hashes no longer match.
  const other = JSON.stringify({ ...request, submitted_output: { ...request.submitted_output, total: 135.51 } });
  got = await checkWith(page, { receipt, request: other });
  assert.match(got.verdict, /^✗ not valid/, got.verdict);
  assert.equal(got.hashes.output_hash, 'false');
  assert.equal(got.hashes.request_hash, 'false');
  assert.equal(got.hashes.schema_hash, 'true');

  // A failing verdict is a valid receipt too, with its hints shown.
  const failing = await verify(invoice(marker, agent, 999));
  got = await checkWith(page, { receipt: failing });
  assert.match(got.verdict, /^✓ valid/, got.verdict);
  assert.ok((await page.locator('#answer-lists').textContent()).includes('sum_equals'), 'the hints are shown');
  await screenshots(page, 'check-fail-receipt');

  // A pasted agent card works as a key source; a trust record verifies too.
  const card = await (await fetch(`${server.base}/.well-known/agent-card.json`)).text();
  got = await checkWith(page, { receipt, keySource: 'pasted', key: card });
  assert.match(got.verdict, /^✓ valid/, got.verdict);
  const record = await (await fetch(`${server.base}/score/${agent}`)).text();
  got = await checkWith(page, { receipt: record });
  assert.match(got.verdict, /^✓ valid: a trust record/, got.verdict);

  // By keyboard alone: type the receipt, Tab to the button, press Enter.
  await page.locator('#clear').click();
  await page.locator('#key-server').check();
  await page.locator('#receipt').focus();
  await page.keyboard.insertText(receipt);
  let tabs = 0;
  while (await page.evaluate(() => document.activeElement.id) !== 'check' && tabs < 12) {
    await page.keyboard.press('Tab');
    tabs++;
  }
  assert.equal(await page.evaluate(() => document.activeElement.id), 'check', 'the check button is reachable by Tab');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => !document.querySelector('#check').disabled && !document.querySelector('#result').hidden);
  assert.match(await page.locator('#verdict').textContent(), /^✓ valid/);

  // The receipt's own key: none in a receipt of a server with a public URL.
  got = await checkWith(page, { receipt, keySource: 'own' });
  assert.equal(got.checks['Public key'], 'failed');

  await context.close();
  assertStayedHome(seen, '/check');
  assertNotSent(seen, marker);
  // After loading, the only requests were for the agent card and, by the
  // receipt's verification_id, its log proof and stored compact receipt
  // (and the page's icon, which the browser may fetch late).
  const after = seen.slice(loaded).map((r) => new URL(r.url).pathname).filter((p) => p !== '/docs/favicon.svg');
  assert.ok(after.length > 0 && after.every((p) => p === '/.well-known/agent-card.json' || /^\/(log\/proof|receipts)\/[0-9a-f-]{36}$/.test(p)),
    `requests after loading: ${after}`);
  assert.deepEqual(problems, []);
});

test('/check verifies a receipt\'s inclusion in this server\'s transparency log, and finds a tampered proof', async () => {
  const marker = `marker-${randomUUID()}`;
  const agent = `e2e-log-${randomUUID().slice(0, 8)}`;
  const full = await verify(invoice(marker, agent, 135.5));
  await verify(invoice(marker, agent, 135.5)); // so the proof has a hash to tamper with
  const id = JSON.parse(full).verification_id;
  const stored = await (await fetch(`${server.base}/receipts/${id}`)).text();
  const proofText = await (await fetch(`${server.base}/log/proof/${id}`)).text();
  const proof = JSON.parse(proofText);
  assert.ok(proof.inclusion_proof.length > 0, `a proof with hashes: ${proofText}`);
  const logFacts = () => page.locator('#log-facts').evaluateAll((dls) => Object.fromEntries(
    [...dls[0].querySelectorAll('div')].map((d) => [d.querySelector('dt').textContent, d.querySelector('dd').textContent])));

  const context = await browser.newContext();
  const seen = watch(context);
  const problems = [];
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`); });
  await page.goto(`${server.base}/check`);
  const loaded = seen.length;

  // The stored receipt, re-encoded (members reordered, indented): the page
  // asks this server for its proof, and every log check holds.
  const reencoded = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(stored)).reverse()), null, 2);
  let got = await checkWith(page, { receipt: reencoded });
  assert.match(got.verdict, /^✓ valid/, got.verdict);
  for (const name of Object.values(LOG_CHECKS)) assert.equal(got.checks[name], 'held', `check ${name}: ${JSON.stringify(got.checks)}`);
  assert.equal(await page.locator('#log').getAttribute('data-state'), 'verified');
  let facts = await logFacts();
  assert.match(facts.Inclusion, /^✓ verified/);
  assert.equal(facts['Log index'], String(proof.log_index));
  assert.ok(Number(facts['Tree size']) >= proof.tree_size, `tree size ${facts['Tree size']}`);
  await screenshots(page, 'check-log-verified');

  // The full answer: the log holds its compact receipt, which says the same.
  got = await checkWith(page, { receipt: full });
  assert.match(got.verdict, /^✓ valid/, got.verdict);
  assert.equal(got.checks['Log entry'], 'held');
  assert.match(await page.locator('#checks li[data-check="Log entry"]').textContent(), /compact receipt/);

  // A pasted proof with a hash changed: inclusion fails, and says so.
  const tampered = { ...proof, inclusion_proof: [proof.entry, ...proof.inclusion_proof.slice(1)] };
  await page.getByRole('textbox', { name: /^Log proof/ }).fill(JSON.stringify(tampered));
  got = await checkWith(page, { receipt: stored });
  assert.match(got.verdict, /^✗ not valid: Log inclusion failed/, got.verdict);
  assert.equal(got.checks['Log inclusion'], 'failed');
  assert.equal(await page.locator('#log').getAttribute('data-state'), 'failed');
  facts = await logFacts();
  assert.match(facts.Inclusion, /^✗ not verified/);
  assert.equal(facts['Proof from'], 'the pasted log proof');
  await screenshots(page, 'check-log-tampered');
  // Its checkpoint edited: the signature under the card's log key fails.
  const edited = { ...proof, checkpoint: proof.checkpoint.replace(`\n${proof.tree_size}\n`, `\n${proof.tree_size + 1}\n`) };
  assert.notEqual(edited.checkpoint, proof.checkpoint);
  await page.getByRole('textbox', { name: /^Log proof/ }).fill(JSON.stringify(edited));
  got = await checkWith(page, { receipt: stored });
  assert.match(got.verdict, /^✗ not valid: Log checkpoint failed/, got.verdict);
  // Not a proof at all: named, not echoed.
  const proofMarker = `proof-marker-${randomUUID()}`;
  await page.getByRole('textbox', { name: /^Log proof/ }).fill(JSON.stringify({ ...proof, log_index: proofMarker }));
  got = await checkWith(page, { receipt: stored });
  assert.equal(got.checks['Log proof'], 'failed');
  assert.ok(!(await page.locator('#result').textContent()).includes(proofMarker), 'the result quotes the pasted proof');
  await page.getByRole('textbox', { name: /^Log proof/ }).fill('');

  // The Go tests' cases, through the page's own module: the same outcome.
  const cases = JSON.parse(readFileSync(LOG_VECTOR, 'utf8'));
  const outcomes = await page.evaluate(async (all) => {
    const { checkLogInclusion } = await import('/docs/logcheck.js');
    const out = [];
    for (const c of all) {
      // A full answer's case carries the stored compact receipt the log
      // holds, as /check fetches it from GET /receipts/{verification_id}.
      const storedReceipt = c.stored ? async () => JSON.parse(c.stored) : undefined;
      const r = await checkLogInclusion(JSON.parse(c.receipt), c.proof, c.verifier_key, { storedReceipt });
      out.push({ ok: r.ok, last: r.checks[r.checks.length - 1], count: r.checks.length });
    }
    return out;
  }, cases);
  cases.forEach((c, i) => {
    const o = outcomes[i];
    if (c.want_fail === '') {
      assert.ok(o.ok && o.count === 4, `${c.name}: ${JSON.stringify(o)}`);
    } else {
      assert.ok(!o.ok && o.last.state === 'failed' && o.last.name === LOG_CHECKS[c.want_fail], `${c.name}: want ${c.want_fail} failed, got ${JSON.stringify(o)}`);
    }
  });

  await context.close();
  assertStayedHome(seen, '/check with the transparency log');
  assertNotSent(seen, marker);
  assertNotSent(seen, proofMarker);
  const after = seen.slice(loaded).map((r) => new URL(r.url).pathname);
  assert.ok(after.every((p) => ['/docs/favicon.svg', '/.well-known/agent-card.json', `/log/proof/${id}`, `/receipts/${id}`].includes(p)), `requests after loading: ${after}`);
  assert.deepEqual(problems, []);
});

test('/check checks a receipt by its own verify.public_key, and says what that proves', async () => {
  // A receipt of another signer that carries its public key in verify (as a
  // server without a public URL does, SPEC §5): this server's answer,
  // re-signed here with a fresh key by Node's own Ed25519.
  const marker = `marker-${randomUUID()}`;
  const answer = JSON.parse(await verify(invoice(marker, null, 135.5)));
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const rawKey = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');
  delete answer.attestation;
  answer.verify = { ...answer.verify, key_version: 'other-1', public_key: rawKey };
  delete answer.verify.public_key_url;
  const signed = canonicalize({ context: 'json-schema-verifier/verify-schema-attestation/v1', algorithm: 'Ed25519',
    key_version: 'other-1', attested_at: answer.verified_at, response: answer });
  const signature = sign(null, Buffer.from(signed), privateKey).toString('base64');
  const receipt = JSON.stringify({ ...answer, attestation: { algorithm: 'Ed25519', key_version: 'other-1', timestamp: answer.verified_at, signature } });

  const context = await browser.newContext();
  const seen = watch(context);
  const page = await context.newPage();
  await page.goto(`${server.base}/check`);
  let got = await checkWith(page, { receipt, keySource: 'own' });
  assert.match(got.verdict, /^✓ valid/, got.verdict);
  assert.match(await page.locator('#verdict-note').textContent(), /does not prove who signed it/);
  got = await checkWith(page, { receipt, keySource: 'pasted', key: rawKey });
  assert.match(got.verdict, /^✓ valid/, got.verdict);
  // This server never published that key: with its card the receipt fails,
  // and the public key check says why.
  got = await checkWith(page, { receipt });
  assert.match(got.verdict, /^✗ not valid: Public key/, got.verdict);
  // Its own key does not save a changed receipt.
  got = await checkWith(page, { receipt: receipt.replace('"result":"pass","verification_id"', '"result":"fail","verification_id"'), keySource: 'own' });
  assert.match(got.verdict, /^✗ not valid: Signature failed/, got.verdict);
  await context.close();
  assertStayedHome(seen, '/check');
  assertNotSent(seen, marker);
});

test('/check verifies a receipt of the hosted service with the hosted card pasted', async () => {
  // A server signing with the hosted card's key, under its key version, and
  // advertising a hosted-looking public URL: its receipts carry
  // public_key_url and no key of their own, as the hosted service's do.
  const hostedURL = 'https://verifier.hosted.example';
  const hosted = await startServer(['--public-url', hostedURL], { signingKey: HOSTED_KEY });
  let receipt;
  try {
    const marker = `marker-${randomUUID()}`;
    const res = await fetch(`${hosted.base}/verify/schema`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(invoice(marker, null, 135.5)),
    });
    assert.equal(res.status, 200);
    receipt = await res.text();
  } finally {
    await stopServer(hosted);
  }
  const answer = JSON.parse(receipt);
  assert.equal(answer.attestation.key_version, HOSTED_KEY.keyVersion, 'signed with the hosted key');
  assert.equal(answer.verify.public_key, undefined, 'the receipt carries no key of its own');
  assert.ok(answer.verify.public_key_url.startsWith(`${hostedURL}/`), `public_key_url ${answer.verify.public_key_url}`);

  const card = readFileSync(HOSTED_CARD, 'utf8');
  assert.ok(card.includes(`"publicKeyEncoding": "${HOSTED_ENCODING}"`), 'the hosted card names its encoding as the hosted service does');
  const context = await browser.newContext();
  const seen = watch(context);
  const page = await context.newPage();
  await page.goto(`${server.base}/check`);
  const publicKeyText = () => page.locator('#checks li[data-check="Public key"]').textContent();

  // The hosted card pasted: valid, and the key came from the pasted card.
  let got = await checkWith(page, { receipt, keySource: 'pasted', key: card });
  assert.match(got.verdict, /^✓ valid/, got.verdict);
  for (const name of RECEIPT_CHECKS) assert.equal(got.checks[name], 'held', `check ${name}: ${JSON.stringify(got.checks)}`);
  assert.match(await publicKeyText(), /Using the pasted agent card's key v1-2026-11a/);

  // This server's own card: it never published the hosted key, so the
  // receipt is not valid and its signature is not vouched for.
  got = await checkWith(page, { receipt });
  assert.match(got.verdict, /^✗ not valid/, got.verdict);
  assert.equal(got.checks['Public key'], 'failed');
  assert.equal(got.checks.Signature, 'failed');
  // This server's own key under the hosted key version (a card that is a
  // well-formed key, just not the signer's): the signature itself fails.
  const ownCard = JSON.parse(await (await fetch(`${server.base}/.well-known/agent-card.json`)).text());
  const ownKey = ownCard.capabilities.extensions.flatMap((e) => (e.params && e.params.publicKeys) || [])[0].publicKey;
  const wrongKey = card.replace(/"publicKey": "[^"]+"/, `"publicKey": "${ownKey}"`);
  assert.notEqual(wrongKey, card);
  got = await checkWith(page, { receipt, keySource: 'pasted', key: wrongKey });
  assert.match(got.verdict, /^✗ not valid: Signature failed/, got.verdict);
  assert.equal(got.checks['Public key'], 'held');

  // A card naming any other encoding is refused, saying which one is read.
  for (const other of ['base64', 'hex', 'base64url of the raw 32-byte Ed25519 public key']) {
    const bad = card.replace(`"${HOSTED_ENCODING}"`, JSON.stringify(other));
    assert.notEqual(bad, card);
    got = await checkWith(page, { receipt, keySource: 'pasted', key: bad });
    assert.match(got.verdict, /^✗ not valid: Public key/, `encoding ${other}: ${got.verdict}`);
    const text = await publicKeyText();
    assert.ok(text.includes(`publicKeyEncoding is ${JSON.stringify(other)}, not "${HOSTED_ENCODING}"`), `encoding ${other}: ${text}`);
  }
  await context.close();
  assertStayedHome(seen, '/check with the hosted card');
});

test('/agents/{agent_id} shows the counts and one chart mark per day', async () => {
  const agent = `e2e-seller-${randomUUID().slice(0, 8)}`;
  const days = new Set();
  for (const total of [135.5, 135.5, 1, 135.5, 2]) {
    const answer = JSON.parse(await verify(invoice(`m-${randomUUID()}`, agent, total)));
    assert.equal(answer.result, total > 100 ? 'pass' : 'fail');
    days.add(answer.verified_at.slice(0, 10));
  }
  const context = await browser.newContext();
  const seen = watch(context);
  const page = await context.newPage();
  const res = await page.goto(`${server.base}/agents/${agent}`);
  assert.equal(res.status(), 200);
  assert.equal(await page.locator('#total').textContent(), '5');
  assert.equal(await page.locator('#passed').textContent(), '3');
  assert.equal(await page.locator('#failed').textContent(), '2');
  const marks = await page.locator('svg#chart g.day').evaluateAll((gs) => gs.map((g) => ({ day: g.dataset.day, passed: g.dataset.passed, failed: g.dataset.failed })));
  assert.deepEqual(marks.map((m) => m.day), [...days].sort(), 'one mark per day');
  assert.equal(marks.reduce((n, m) => n + Number(m.passed), 0), 3);
  assert.equal(marks.reduce((n, m) => n + Number(m.failed), 0), 2);
  assert.equal(await page.locator('svg#chart circle.lower-point').count(), days.size, 'the score lower bound per day');
  assert.equal(await page.locator('#recent tbody tr').count(), 5);
  assert.equal(await page.locator('#recent a[href^="/receipts/"]').count(), 5);
  assert.match(await page.locator('#score').textContent(), /^\d{1,3}\.\d$/, 'payment is off: the score is shown');
  await screenshots(page, 'agent');

  // A receipt link leads to the stored receipt.
  const href = await page.locator('#recent a[href^="/receipts/"]').first().getAttribute('href');
  assert.equal((await fetch(`${server.base}${href}`)).status, 200);

  // An unknown agent is a friendly 404 page.
  const missing = await page.goto(`${server.base}/agents/nobody-${randomUUID()}`);
  assert.equal(missing.status(), 404);
  assert.equal(await page.locator('h1').textContent(), 'No record for this agent');
  await context.close();
  assertStayedHome(seen, '/agents');
});

test('an agent page\'s receipt link opens /check with that receipt loaded and checked', async () => {
  const agent = `e2e-link-${randomUUID().slice(0, 8)}`;
  const marker = `marker-${randomUUID()}`;
  const answer = JSON.parse(await verify(invoice(marker, agent, 135.5)));
  const id = answer.verification_id;
  const context = await browser.newContext();
  const seen = watch(context);
  const problems = [];
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`); });
  await page.goto(`${server.base}/agents/${agent}`);
  const link = page.locator(`#recent a[href="/check?id=${id}"]`);
  assert.equal(await link.count(), 1, 'the verdict links /check with its verification_id');
  await link.click();
  await page.waitForURL(`${server.base}/check?id=${id}`);
  await page.waitForFunction(() => !document.querySelector('#result').hidden && !document.querySelector('#check').disabled);
  // The receipt in the form is the one this server stored, byte for byte.
  const stored = await (await fetch(`${server.base}/receipts/${id}`)).text();
  assert.equal(await page.getByRole('textbox', { name: /^Receipt/ }).inputValue(), stored);
  const verdict = (await page.locator('#verdict').textContent()).trim();
  assert.match(verdict, /^✓ valid/, verdict);
  assert.equal(await page.locator('#checks li[data-check="Log inclusion"]').getAttribute('data-state'), 'held');
  assert.match(await page.locator('#load-status').textContent(), new RegExp(`Loaded the receipt with verification_id ${id}`));
  await screenshots(page, 'check-from-agent-link');
  // From the agent page on, the page asked this server for the receipt, the
  // card and the log proof only.
  const paths = seen.map((r) => new URL(r.url).pathname);
  const fromCheck = paths.slice(paths.indexOf('/check'));
  assert.ok(fromCheck.every((p) => ['/check', '/docs/pages.css', '/docs/check.js', '/docs/canonicalize.js', '/docs/logcheck.js',
    '/docs/favicon.svg', '/favicon.ico', '/.well-known/agent-card.json', `/receipts/${id}`, `/log/proof/${id}`].includes(p)), `requests: ${fromCheck}`);
  assert.ok(fromCheck.includes(`/receipts/${id}`));

  assert.deepEqual(problems, []);

  // An id this server never issued (the browser logs the 404): said so,
  // nothing checked; an id that is not a plain one is not echoed.
  await page.goto(`${server.base}/check?id=${randomUUID()}`);
  await page.locator('#load-status').filter({ hasText: 'stored no receipt' }).waitFor();
  assert.equal(await page.locator('#result').isHidden(), true);
  const odd = `<b>${marker}</b>`;
  await page.goto(`${server.base}/check?id=${encodeURIComponent(odd)}`);
  await page.locator('#load-status').filter({ hasText: 'names no verification_id' }).waitFor();
  assert.ok(!(await page.locator('main').textContent()).includes(marker), 'the page repeats the odd id');
  await context.close();
  assertStayedHome(seen, '/check?id=');
  assertNotSent(seen.filter((r) => !new URL(r.url).pathname.startsWith('/check')), marker);
});

test('every page has a favicon the browser renders, and /favicon.ico is one', async () => {
  const agent = `e2e-icon-${randomUUID().slice(0, 8)}`;
  await verify(invoice(`m-${randomUUID()}`, agent, 135.5));
  const context = await browser.newContext();
  const page = await context.newPage();
  // decoded loads src as an image in the page and gives its natural size.
  const decoded = (src) => page.evaluate((s) => new Promise((done) => {
    const img = new Image();
    img.onload = () => done({ w: img.naturalWidth, h: img.naturalHeight });
    img.onerror = () => done(null);
    img.src = s;
  }), src);
  for (const path of ['/', '/check', `/agents/${agent}`, '/agents/nobody', '/docs']) {
    await page.goto(`${server.base}${path}`);
    const href = await page.locator('link[rel="icon"]').evaluate((l) => l.href);
    assert.equal(new URL(href).origin, server.base, `${path}: the icon is this server's`);
    const res = await fetch(href);
    assert.equal(res.status, 200, `${path}: GET ${href}`);
    assert.equal(res.headers.get('content-type'), 'image/svg+xml', `${path}: the icon's type`);
    const size = await decoded(href);
    assert.ok(size && size.w > 0 && size.h > 0, `${path}: the browser renders ${href}: ${JSON.stringify(size)}`);
  }
  await page.goto(`${server.base}/`);
  const ico = await decoded('/favicon.ico');
  assert.ok(ico && ico.w > 0, `the browser renders /favicon.ico: ${JSON.stringify(ico)}`);
  await context.close();
});
