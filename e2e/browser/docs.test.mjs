// Browser test of the /docs page: a real `verifier --http` process, Debian's
// Chromium driven by playwright-core. The page must list every route of the
// OpenAPI document, send a verification from "Try it out", and load nothing
// from anywhere but the server.
//
//   VERIFIER_BIN=/path/to/verifier node --test docs.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, startServer, stopServer } from './harness.mjs';

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  await stopServer(server);
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

test('/docs spaces the header cells of the error table', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${server.base}/docs`);
  const table = page.locator('.swagger-ui .info table').first();
  await table.waitFor({ timeout: 20000 });
  // The gap between one header cell's text and the next one's, in pixels.
  const cells = await table.locator('thead th').evaluateAll((ths) => ths.map((th) => {
    const range = document.createRange();
    range.selectNodeContents(th);
    const r = range.getBoundingClientRect();
    return { text: th.textContent.trim(), left: r.left, right: r.right };
  }));
  assert.deepEqual(cells.map((c) => c.text), ['code', 'HTTP', 'retryable', 'meaning']);
  for (let i = 1; i < cells.length; i++) {
    const gap = cells[i].left - cells[i - 1].right;
    assert.ok(gap >= 12, `"${cells[i - 1].text}" and "${cells[i].text}" are ${gap.toFixed(1)} px apart`);
  }
  await context.close();
});
