// What the browser tests share: a real `verifier --http` process on a free
// loopback port with a fresh data dir, and Debian's Chromium driven by
// playwright-core (never a downloaded browser).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const BIN = process.env.VERIFIER_BIN;
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
// playwright-core gives every launch a new empty --user-data-dir of its own.
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  // Anything not on loopback goes to a closed port: it cannot leave even if
  // the page tried (the test still fails on the attempt).
  '--proxy-server=http://127.0.0.1:9',
];

// launchBrowser starts the system Chromium.
export function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

// startServer runs the binary on a free port with a fresh data dir and
// resolves once its "serving HTTP" log line names the address. With
// signingKey {keyVersion, seed (base64)}, the data dir's key store starts
// with that key as its current one, so the server signs with it.
export function startServer(extraArgs = [], { signingKey } = {}) {
  assert.ok(BIN, 'VERIFIER_BIN must name the verifier binary');
  const dataDir = mkdtempSync(join(tmpdir(), 'verifier-e2e-'));
  if (signingKey) {
    const keys = join(dataDir, 'keys');
    mkdirSync(keys, { mode: 0o700 });
    writeFileSync(join(keys, `${signingKey.keyVersion}.key`), `${signingKey.seed}\n`, { mode: 0o600 });
    writeFileSync(join(keys, 'current'), `${signingKey.keyVersion}\n`, { mode: 0o600 });
  }
  const proc = spawn(BIN, ['--http', '127.0.0.1:0', '--data-dir', dataDir, ...extraArgs], {
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

// stopServer ends the server with SIGTERM, checks it closed its store, and
// removes its data dir.
export async function stopServer(server) {
  if (!server) return;
  if (!server.exited) {
    server.proc.kill('SIGTERM');
    const { code } = await server.waitExit();
    assert.equal(code, 0, `the server exited with ${code} on SIGTERM:\n${server.log}`);
    assert.match(server.log, /store closed/, 'the server closes its store on SIGTERM');
  }
  rmSync(server.dataDir, { recursive: true, force: true });
}
