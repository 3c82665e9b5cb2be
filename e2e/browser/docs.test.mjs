// Browser test of the /docs page: a real `verifier --http` process, Debian's
// Chromium driven by playwright-core. The page must list every route of the
// OpenAPI document, send a verification from "Try it out", and load nothing
// from anywhere but the server.
//
//   VERIFIER_BIN=/path/to/verifier node --test docs.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const BIN = process.env.VERIFIER_BIN;
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  // Anything not on loopback goes to a closed port: it cannot leave even if
  // the page tried (the test still fails on the attempt).
  '--proxy-server=http://127.0.0.1:9',
];

let server;
let browser;

// startServer runs the binary on a free port with a fresh data dir and
// resolves once its "serving HTTP" log line names the address.
function startServer() {
  assert.ok(BIN, 'VERIFIER_BIN must name the verifier binary');
  const dataDir = mkdtempSync(join(tmpdir(), 'verifier-e2e-'));
  const proc = spawn(BIN, ['--http', '127.0.0.1:0', '--data-dir', dataDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, VERIFIER_SIGNING_KEY: '' },
  });
  const state = { proc, dataDir, log: '', exited: null };
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (chunk) => { state.log += chunk; });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => { state.exited = { code, signal }; resolve(state.exited); }));
  state.waitExit = () => exited;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${state.log}`)), 20000);
    const poll = setInterval(() => {
      const m = /msg="serving HTTP" addr=(\S+)/.exec(state.log);
      if (m) {
        clearInterval(poll);
        clearTimeout(timer);
        state.base = `http://${m[1]}`;
        resolve(state);
      } else if (state.exited) {
        clearInterval(poll);
        clearTimeout(timer);
        reject(new Error(`the server exited (${JSON.stringify(state.exited)}):\n${state.log}`));
      }
    }, 50);
  });
}

before(async () => {
  server = await startServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

after(async () => {
  if (browser) await browser.close();
  if (server) {
    if (!server.exited) {
      server.proc.kill('SIGTERM');
      const { code } = await server.waitExit();
      assert.equal(code, 0, `the server exited with ${code} on SIGTERM:\n${server.log}`);
      assert.match(server.log, /store closed/, 'the server closes its store on SIGTERM');
    }
    rmSync(server.dataDir, { recursive: true, force: true });
  }
});

test('/docs lists every route and sends a verification, all from the server', async () => {
  const { base } = server;
  const spec = await (await fetch(`${base}/openapi.json`)).json();
  const documented = Object.entries(spec.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();

  const context = await browser.newContext();
  const requests = [];
  const problems = [];
  context.on('request', (req) => requests.push(req.url()));
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });

  const res = await page.goto(`${base}/docs`);
  assert.equal(res.status(), 200);
  await page.locator('.opblock').first().waitFor({ timeout: 20000 });

  // Every documented operation is on the page, and nothing else.
  const shown = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((b) => {
    const method = b.querySelector('.opblock-summary-method').textContent.trim();
    const path = b.querySelector('.opblock-summary-path').getAttribute('data-path');
    return `${method} ${path}`;
  }));
  assert.deepEqual([...shown].sort(), documented);
  for (const route of ['POST /verify/schema', 'POST /verify/deliverable', 'GET /score/{agent_id}',
    'GET /reputation/{agent_id}', 'GET /receipts/{verification_id}', 'GET /health',
    'GET /.well-known/agent-card.json', 'GET /.well-known/agent.json', 'GET /llms.txt',
    'GET /openapi.json', 'GET /docs', 'POST /mcp']) {
    assert.ok(shown.includes(route), `the page shows ${route}`);
  }

  // Try POST /verify/schema with the example request.
  const op = page.locator('#operations-verification-verifySchema');
  await op.locator('.opblock-summary').click();
  const answered = page.waitForResponse((r) => r.url() === `${base}/verify/schema` && r.request().method() === 'POST');
  await op.locator('button.execute').click();
  const answer = await answered;
  assert.equal(answer.status(), 200);
  const body = await answer.json();
  assert.equal(body.result, 'pass');
  assert.equal(body.task_id, 'invoice-42');
  assert.match(body.attestation.signature, /^[A-Za-z0-9+/]+=*$/);
  await op.locator('.live-responses-table .response-col_status').filter({ hasText: '200' }).first().waitFor();
  const shownBody = await op.locator('.live-responses-table .response-col_description pre').first().textContent();
  assert.ok(shownBody.includes(body.verification_id), 'the page shows the answer');

  // The server stored it: the receipt is there.
  const receipt = await fetch(`${base}/receipts/${body.verification_id}`);
  assert.equal(receipt.status, 200);
  assert.equal((await receipt.json()).verification_id, body.verification_id);

  // Nothing left the server.
  await context.close();
  const outside = requests.filter((u) => !u.startsWith(`${base}/`) && !u.startsWith('data:'));
  assert.deepEqual(outside, [], 'every request of the page went to the server');
  assert.ok(requests.includes(`${base}/docs/swagger-ui-bundle.js`), 'the page loaded its assets from the server');
  assert.deepEqual(problems, []);
});
