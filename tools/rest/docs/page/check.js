// The receipt checker of /check. Everything happens in this page: the
// receipt, the request, a pasted key and a pasted log proof are never sent
// anywhere. Its only requests go to this server: GET
// /.well-known/agent-card.json, for its public keys and its transparency
// log key, and, with the receipt's verification_id alone, GET
// /log/proof/{verification_id} (and GET /receipts/{verification_id}, when
// the receipt is the full answer whose compact form the log holds). Opened
// as /check?id={verification_id} (the agent page's receipt links), it
// first loads the receipt this server stored under that id, and checks it.
//
// It does what SPEC §5 says a receipt check is: rebuild the signed document
//   {"context", "algorithm", "key_version", "attested_at", "response"}
// (response = the receipt without "attestation") as RFC 8785 canonical JSON,
// verify the Ed25519 signature with WebCrypto and, with the original
// request, recompute the four SHA-256 hashes. Then it checks that the
// transparency log includes the receipt (logcheck.js).
import canonicalize from '/docs/canonicalize.js';
import { checkLogInclusion } from '/docs/logcheck.js';

const CONTEXTS = [
  ['json-schema-verifier/verify-schema-attestation/v1', 'a verification answer'],
  ['json-schema-verifier/trust-score-attestation/v1', 'a trust record'],
];
const ALGORITHM = 'Ed25519';
const DEFAULT_TOLERANCE = 1e-9;
const RULE_FIELDS = ['equals', 'equals_field', 'field', 'if_present', 'in_field', 'other_field', 'tolerance', 'type', 'value', 'values'];
const MAX_BYTES = 4 << 20;

const $ = (id) => document.getElementById(id);

// ---- strict JSON: what JSON.parse lets through silently

// jsonProblem returns why text is not one exact I-JSON value (a duplicate
// key, a number that is not exactly the double the signature covers, a lone
// surrogate), or '' when it is. It assumes JSON.parse accepted text.
function jsonProblem(text) {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
  const str = () => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const value = (path) => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set();
      ws();
      if (text[i] === '}') { i++; return ''; }
      for (;;) {
        ws();
        const key = str();
        if (seen.has(key)) return `the key ${JSON.stringify(key).slice(0, 60)} appears twice in ${path}`;
        seen.add(key);
        ws(); i++; // ':'
        const p = value(`${path}.${key}`);
        if (p) return p;
        ws();
        if (text[i++] === '}') return '';
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') { i++; return ''; }
      for (let n = 0; ; n++) {
        const p = value(`${path}[${n}]`);
        if (p) return p;
        ws();
        if (text[i++] === ']') return '';
      }
    }
    if (c === '"') {
      const s = str();
      return s.isWellFormed() ? '' : `a string in ${path} has a lone surrogate`;
    }
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m) {
      i += m[0].length;
      const n = Number(m[0]);
      if (!Number.isFinite(n) || decimal(m[0]) !== decimal(String(n))) {
        return `the number ${m[0].slice(0, 40)} in ${path} is not exactly a double, so the signature would cover another number`;
      }
      return '';
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) { i += lit.length; return ''; }
    }
    return `unexpected text in ${path}`;
  };
  return value('$');
}

// decimal writes a number literal's exact value as digits and an exponent.
function decimal(lit) {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(lit);
  let digits = m[2] + (m[3] || '');
  let exp = Number(m[4] || 0) - (m[3] || '').length;
  digits = digits.replace(/^0+/, '');
  if (digits === '') return '0';
  while (digits.endsWith('0')) { digits = digits.slice(0, -1); exp++; }
  return `${m[1]}${digits}e${exp}`;
}

// parseStrict parses text as JSON and names the first problem with it.
function parseStrict(text, what) {
  if (new TextEncoder().encode(text).length > MAX_BYTES) {
    return { problem: `the ${what} is larger than ${MAX_BYTES} bytes` };
  }
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { problem: `the ${what} is not JSON (${e.message})` };
  }
  const problem = jsonProblem(text);
  return problem ? { problem: `the ${what} is not exact I-JSON: ${problem}` } : { value };
}

// ---- bytes

function base64Bytes(s) {
  if (typeof s !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(s) || s.length % 4 !== 0) return null;
  try {
    return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const brief = (s) => { const t = String(s); return t.length > 80 ? `${t.slice(0, 80)}…` : t; };

// ---- keys

// PUBLIC_KEY_ENCODING is the one publicKeyEncoding a card's Ed25519 keys may
// name (signing.PublicKeyEncoding on the Go side): standard base64 of the
// 32 raw key bytes. It is what this server's card and the hosted service's
// card publish.
const PUBLIC_KEY_ENCODING = 'base64 of the raw 32-byte Ed25519 public key';

// encodingProblem says why a key entry's publicKeyEncoding is not the one
// this page reads, or returns '' when it is.
function encodingProblem(entry, at) {
  if (entry.publicKeyEncoding === PUBLIC_KEY_ENCODING) return '';
  const named = typeof entry.publicKeyEncoding === 'string' ? `is ${brief(JSON.stringify(entry.publicKeyEncoding))}` : 'is missing';
  return `${at}.publicKeyEncoding ${named}, not "${PUBLIC_KEY_ENCODING}", the only encoding this page reads (standard base64 of the 32 raw key bytes)`;
}

// keysFromCard reads {keyVersion: base64} from an agent card's attestation
// extension(s): capabilities.extensions[].params.publicKeys[]. An Ed25519
// entry that names another publicKeyEncoding makes the card unreadable:
// {keys, problem}.
function keysFromCard(card) {
  const keys = new Map();
  const exts = card && card.capabilities && Array.isArray(card.capabilities.extensions) ? card.capabilities.extensions : [];
  for (const [i, ext] of exts.entries()) {
    const list = ext && ext.params && Array.isArray(ext.params.publicKeys) ? ext.params.publicKeys : [];
    for (const [j, k] of list.entries()) {
      if (k && typeof k.keyVersion === 'string' && typeof k.publicKey === 'string' &&
          (k.algorithm === undefined || k.algorithm === ALGORITHM)) {
        const problem = encodingProblem(k, `capabilities.extensions[${i}].params.publicKeys[${j}]`);
        if (problem) return { keys: new Map(), problem };
        keys.set(k.keyVersion, k.publicKey);
      }
    }
  }
  return { keys, problem: '' };
}

// cardRequest is this check's fetch of this server's agent card, made once
// per check (serverCard).
let cardRequest = null;

// serverCard returns this server's agent card: {card} or {problem}.
function serverCard() {
  cardRequest ??= (async () => {
    try {
      const res = await fetch('/.well-known/agent-card.json', { headers: { Accept: 'application/json' }, credentials: 'omit', cache: 'no-cache' });
      if (!res.ok) return { problem: `this server's agent card could not be read (HTTP ${res.status})` };
      return { card: await res.json() };
    } catch (e) {
      return { problem: `this server's agent card could not be read (${e.message})` };
    }
  })();
  return cardRequest;
}

// logKeyOf returns the transparency log key an agent card publishes
// (params.transparencyLog.verifierKey of an extension), or ''.
function logKeyOf(card) {
  const exts = isObject(card) && isObject(card.capabilities) && Array.isArray(card.capabilities.extensions) ? card.capabilities.extensions : [];
  for (const ext of exts) {
    const log = ext && ext.params && ext.params.transparencyLog;
    if (isObject(log) && typeof log.verifierKey === 'string') return log.verifierKey;
  }
  return '';
}

// findKey returns {key (base64) | null, source, note, problem}.
async function findKey(choice, keyVersion, receipt, pasted) {
  if (choice === 'own') {
    const key = receipt.verify && receipt.verify.public_key;
    if (typeof key !== 'string') return { problem: 'the receipt carries no verify.public_key; choose the agent card or paste a key' };
    return { key, source: "the receipt's own verify.public_key", note: 'This proves the receipt was not changed after it was signed; it does not prove who signed it. Check the key against the issuer\'s published agent card for that.' };
  }
  if (choice === 'pasted') {
    const text = pasted.trim();
    if (!text) return { problem: 'no agent card or key was pasted' };
    if (text.startsWith('{')) {
      const { value, problem } = parseStrict(text, 'pasted agent card');
      if (problem) return { problem };
      const { keys, problem: unreadable } = keysFromCard(value);
      if (unreadable) return { problem: `the pasted agent card cannot be read: ${unreadable}` };
      if (keys.size === 0 && typeof value.publicKey === 'string') {
        if (has(value, 'publicKeyEncoding') && encodingProblem(value, 'the pasted key')) return { problem: encodingProblem(value, 'the pasted key') };
        keys.set(value.keyVersion ?? keyVersion, value.publicKey);
      }
      if (!keys.has(keyVersion)) return { problem: `the pasted card has no key for key_version ${brief(keyVersion)}` };
      return { key: keys.get(keyVersion), source: `the pasted agent card's key ${brief(keyVersion)}` };
    }
    return { key: text, source: 'the pasted public key' };
  }
  const { card, problem: unread } = await serverCard();
  if (unread) return { problem: unread };
  const { keys, problem } = keysFromCard(card);
  if (problem) return { problem: `this server's agent card cannot be read: ${problem}` };
  if (!keys.has(keyVersion)) {
    return { problem: `this server's agent card publishes no key for key_version ${brief(keyVersion)}: the receipt was not signed by this server, or with a key it never published` };
  }
  return { key: keys.get(keyVersion), source: `this server's agent card, key ${brief(keyVersion)}` };
}

// ---- the checks

// checkReceipt runs every check and returns {checks, valid, kind, receipt}.
// A check is {name, state: 'held' | 'failed' | 'info', text}.
async function checkReceipt(receiptText, requestText, choice, pastedKey, proofText) {
  cardRequest = null;
  const checks = [];
  const held = (name, text) => checks.push({ name, state: 'held', text });
  const failed = (name, text) => checks.push({ name, state: 'failed', text });
  const info = (name, text) => checks.push({ name, state: 'info', text });
  const out = { checks, kind: '', receipt: null, hashes: [], note: '', log: null };

  const parsed = parseStrict(receiptText, 'receipt');
  if (parsed.problem) { failed('JSON', `${parsed.problem}.`); return out; }
  const receipt = parsed.value;
  if (!isObject(receipt)) { failed('JSON', 'The receipt is JSON but not an object.'); return out; }
  held('JSON', 'The receipt is one JSON object with no duplicate keys, and every number in it is exactly the number that was signed.');
  out.receipt = receipt;

  const att = receipt.attestation;
  const fields = ['algorithm', 'key_version', 'timestamp', 'signature'];
  if (!isObject(att)) { failed('Attestation', 'The receipt has no "attestation" object, so nothing in it is signed.'); return out; }
  const missing = fields.find((f) => typeof att[f] !== 'string' || att[f] === '');
  const extra = Object.keys(att).find((k) => !fields.includes(k));
  if (missing) { failed('Attestation', `attestation.${missing} is missing or not a non-empty string.`); return out; }
  if (extra) { failed('Attestation', `The attestation has a member ${brief(JSON.stringify(extra))} that is not signed and could only mislead.`); return out; }
  held('Attestation', 'The attestation has its algorithm, key version, timestamp and signature, and nothing else.');

  if (att.algorithm === ALGORITHM) held('Algorithm', 'The signature algorithm is Ed25519.');
  else failed('Algorithm', `The algorithm is ${brief(att.algorithm)}, not Ed25519.`);

  if (!has(receipt, 'verified_at')) info('Timestamp', 'The receipt has no verified_at to compare with the attestation timestamp.');
  else if (receipt.verified_at === att.timestamp) held('Timestamp', `The attestation timestamp equals verified_at (${brief(att.timestamp)}).`);
  else failed('Timestamp', `The attestation timestamp ${brief(att.timestamp)} differs from verified_at ${brief(receipt.verified_at)}.`);

  if (isObject(receipt.verify) && has(receipt.verify, 'key_version')) {
    if (receipt.verify.key_version === att.key_version) held('Key version', `verify.key_version and attestation.key_version both name ${brief(att.key_version)}.`);
    else failed('Key version', `verify.key_version ${brief(receipt.verify.key_version)} differs from attestation.key_version ${brief(att.key_version)}.`);
  }

  const found = await findKey(choice, att.key_version, receipt, pastedKey);
  let publicKey = null;
  if (found.problem) {
    failed('Public key', `No public key: ${found.problem}.`);
  } else {
    const raw = base64Bytes(found.key.trim());
    if (!raw || raw.length !== 32) {
      failed('Public key', `The key from ${found.source} is not standard base64 of 32 bytes.`);
    } else {
      try {
        publicKey = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
        held('Public key', `Using ${found.source}: ${found.key.trim()}.`);
        out.note = found.note || '';
      } catch (e) {
        failed('Public key', `This browser could not use the Ed25519 key (${e.message}).`);
      }
    }
  }

  if (publicKey && att.algorithm === ALGORITHM) {
    const sig = base64Bytes(att.signature);
    if (!sig || sig.length !== 64) {
      failed('Signature', 'attestation.signature is not standard base64 of 64 bytes.');
    } else {
      const response = JSON.parse(receiptText);
      delete response.attestation;
      let verified = '';
      for (const [context, kind] of CONTEXTS) {
        const doc = canonicalize({ context, algorithm: att.algorithm, key_version: att.key_version, attested_at: att.timestamp, response });
        if (await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, sig, new TextEncoder().encode(doc))) {
          verified = kind;
          out.kind = kind;
          held('Signature', `The Ed25519 signature is valid over the whole receipt: it is ${kind}, signed under the context ${context}, and no character of it was changed.`);
          break;
        }
      }
      if (!verified) {
        failed('Signature', 'The Ed25519 signature does not verify: the receipt was changed after it was signed, or this key did not sign it.');
      }
    }
  } else if (!publicKey) {
    failed('Signature', 'The signature could not be checked without a public key.');
  }

  if (requestText.trim()) await checkHashes(receipt, requestText, out, { held, failed, info });
  // This server's log is asked only about a receipt signed with a key of
  // this server's card: another signer's receipt is in its own log, if any.
  const askServer = choice === 'server' && publicKey !== null;
  await checkLog(receipt, proofText, { askServer, pastedKey: choice === 'pasted' ? pastedKey : '' }, out, { failed, info });
  return out;
}

// checkLog checks that the transparency log includes the receipt: with the
// pasted log proof, else, when askServer, with this server's (GET
// /log/proof/{id}) if its card publishes a log. The log key is a pasted
// agent card's, else this server's card's. It sets out.log to what the
// page shows of the log.
async function checkLog(receipt, proofText, { askServer, pastedKey }, out, { failed, info }) {
  const pasted = proofText.trim();
  const id = receipt.verification_id;
  if (!pasted && typeof id !== 'string') return; // a trust record: not logged
  if (!pasted && !askServer) {
    info('Transparency log', 'Not checked: this server\'s log holds only receipts signed with its own keys. Paste the issuer\'s log proof (its GET /log/proof/{verification_id}) and agent card to check this one in its log.');
    return;
  }
  let logKey = '';
  let keySource = '';
  if (pastedKey.trim().startsWith('{')) {
    const { value } = parseStrict(pastedKey.trim(), 'pasted agent card');
    if ((logKey = logKeyOf(value))) keySource = 'the pasted agent card';
  }
  if (!logKey) {
    const { card } = await serverCard();
    if ((logKey = logKeyOf(card))) keySource = "this server's agent card";
  }
  let proof;
  let fromServer = false;
  if (pasted) {
    const parsed = parseStrict(pasted, 'log proof');
    if (parsed.problem) { failed('Log proof', `${parsed.problem}.`); out.log = { ok: false }; return; }
    proof = parsed.value;
  } else {
    if (!logKey) { info('Transparency log', 'This server keeps no transparency log (its agent card names none), so the receipt\'s inclusion was not checked.'); return; }
    let res;
    try {
      res = await fetch(`/log/proof/${encodeURIComponent(id)}`, { headers: { Accept: 'application/json' }, credentials: 'omit', cache: 'no-cache' });
    } catch (e) {
      info('Transparency log', `This server's transparency log could not be read (${e.message}), so the receipt's inclusion was not checked.`);
      return;
    }
    if (res.status === 404) {
      info('Transparency log', 'This server\'s transparency log holds no receipt under this verification_id: this server did not store it. For another service\'s receipt, paste its log proof and its agent card.');
      return;
    }
    if (!res.ok) { info('Transparency log', `This server's transparency log could not be read (HTTP ${res.status}), so the receipt's inclusion was not checked.`); return; }
    proof = await res.json();
    fromServer = true;
  }
  if (!logKey) {
    failed('Log checkpoint', 'No log key: this server\'s agent card names no transparency log. Choose "An agent card or key I paste below" and paste the issuer\'s agent card: its params.transparencyLog.verifierKey signs the checkpoint.');
    out.log = { ok: false };
    return;
  }
  // The full answer is not what the log holds: its compact receipt is, as
  // this server stores it.
  const storedReceipt = fromServer ? async () => {
    try {
      const res = await fetch(`/receipts/${encodeURIComponent(id)}`, { headers: { Accept: 'application/json' }, credentials: 'omit', cache: 'no-cache' });
      return res.ok ? await res.json() : null;
    } catch {
      return null;
    }
  } : undefined;
  const result = await checkLogInclusion(receipt, proof, logKey, { storedReceipt });
  out.checks.push(...result.checks);
  out.log = { ok: result.ok, index: result.index, treeSize: result.treeSize, keySource,
    source: fromServer ? "this server's log (GET /log/proof/{verification_id})" : 'the pasted log proof' };
}

// checkHashes recomputes the hashes of SPEC §5 from the request and
// compares them with the receipt's.
async function checkHashes(receipt, requestText, out, { held, failed, info }) {
  const parsed = parseStrict(requestText, 'request');
  if (parsed.problem) { failed('Request', `${parsed.problem}.`); return; }
  const req = parsed.value;
  if (!isObject(req) || !has(req, 'submitted_output') || !has(req, 'expected_schema')) {
    failed('Request', 'The request is not an object with submitted_output and expected_schema.');
    return;
  }
  const sent = (k) => (has(req, k) ? req[k] : null);
  const parts = [
    ['output_hash', 'submitted_output', () => canonicalize(req.submitted_output)],
    ['schema_hash', 'expected_schema', () => canonicalize(req.expected_schema)],
    ['rules_hash', 'bounds and rules as sent', () => canonicalize({ bounds: sent('bounds'), rules: sent('rules') })],
    ['request_hash', 'the whole request, defaults filled in', () => canonicalize(requestAsParsed(req))],
  ];
  for (const [name, what, canonical] of parts) {
    let mine;
    try {
      mine = await sha256Hex(canonical());
    } catch (e) {
      failed(name, `The ${what} could not be canonicalized (${e.message}).`);
      continue;
    }
    const theirs = receipt[name];
    out.hashes.push({ name, theirs: typeof theirs === 'string' ? theirs : '', mine, match: theirs === mine });
    if (!has(receipt, name) && name === 'request_hash') {
      info(name, 'The receipt has no request_hash (a compact answer); the other three hashes tie it to the request.');
    } else if (theirs === mine) {
      held(name, `The ${name} of the receipt is the SHA-256 of ${what}: the receipt is about this request.`);
    } else {
      failed(name, `The ${name} of the receipt is not the SHA-256 of ${what}: the receipt is about another request, or the request was changed.`);
    }
  }
}

// requestAsParsed is the request as request_hash covers it: eight keys,
// every default filled in (SPEC §5).
function requestAsParsed(req) {
  const orNull = (v) => (v === undefined ? null : v);
  const orFalse = (v) => (v === undefined || v === null ? false : v);
  let bounds = null;
  if (isObject(req.bounds) && Object.keys(req.bounds).length > 0) {
    bounds = {};
    for (const key of Object.keys(req.bounds)) {
      const b = req.bounds[key] || {};
      Object.defineProperty(bounds, key, {
        value: { min: orNull(b.min), max: orNull(b.max), if_present: orFalse(b.if_present) },
        enumerable: true, writable: true, configurable: true,
      });
    }
  }
  let rules = null;
  if (Array.isArray(req.rules) && req.rules.length > 0) {
    rules = req.rules.map((rule) => {
      const r = {};
      for (const f of RULE_FIELDS) r[f] = orNull(rule[f]);
      r.tolerance = has(rule, 'tolerance') ? rule.tolerance : DEFAULT_TOLERANCE;
      r.if_present = orFalse(rule.if_present);
      return r;
    });
  }
  return {
    task_id: orNull(req.task_id), agent_id: orNull(req.agent_id),
    expected_schema: req.expected_schema, submitted_output: req.submitted_output,
    strict_content_check: orFalse(req.strict_content_check), bounds, rules,
    enforce_rules: orFalse(req.enforce_rules),
  };
}

// ---- rendering (textContent only: nothing pasted becomes markup)

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

function render(out) {
  $('result').hidden = false;
  const failures = out.checks.filter((c) => c.state === 'failed');
  const valid = failures.length === 0 && out.checks.some((c) => c.name === 'Signature' && c.state === 'held');
  const verdict = $('verdict');
  verdict.className = `verdict ${valid ? 'verdict-valid' : 'verdict-invalid'}`;
  verdict.textContent = valid ? `✓ valid: ${out.kind} whose every check held` :
    `✗ not valid: ${failures.map((c) => c.name).join(', ') || 'the signature could not be checked'} failed`;
  $('verdict-note').textContent = valid ? out.note : '';

  const list = $('checks');
  list.replaceChildren(...out.checks.map((c) => el('li', { class: c.state, 'data-check': c.name, 'data-state': c.state },
    el('span', { class: 'check-name' }, c.name), `: ${c.state === 'held' ? 'held' : c.state === 'failed' ? 'FAILED' : 'note'}. `, c.text)));

  $('hashes-wrap').hidden = out.hashes.length === 0;
  $('hashes').tBodies[0].replaceChildren(...out.hashes.map((h) => el('tr', { 'data-hash': h.name, 'data-match': String(h.match) },
    el('th', { scope: 'row' }, h.name), el('td', {}, el('code', {}, h.theirs || '(none)')), el('td', {}, el('code', {}, h.mine)),
    el('td', {}, h.match ? 'matches' : 'differs'))));

  renderLog(out.log);
  renderAnswer(out.receipt);
}

// renderLog shows where the receipt is in the transparency log, and
// whether its inclusion was verified.
function renderLog(log) {
  const box = $('log');
  box.hidden = !log;
  if (!log) return;
  box.dataset.state = log.ok ? 'verified' : 'failed';
  const facts = [el('div', {}, el('dt', {}, 'Inclusion'), el('dd', { id: 'log-result' },
    log.ok ? '✓ verified: the log includes this receipt' : '✗ not verified: see the Log checks above'))];
  const fact = (label, value) => {
    if (value !== null && value !== undefined && value !== '') facts.push(el('div', {}, el('dt', {}, label), el('dd', {}, String(value))));
  };
  fact('Log index', log.index);
  fact('Tree size', log.treeSize);
  fact('Proof from', log.source);
  fact('Log key from', log.keySource);
  $('log-facts').replaceChildren(...facts);
}

// renderAnswer shows what the receipt says, readably.
function renderAnswer(r) {
  const box = $('answer');
  if (!isObject(r)) { box.hidden = true; return; }
  box.hidden = false;
  const facts = [];
  const fact = (label, value) => {
    if (value === undefined || value === null || value === '') return;
    facts.push(el('div', {}, el('dt', {}, label), el('dd', {}, typeof value === 'string' ? value : JSON.stringify(value))));
  };
  const ratio = (x) => (isObject(x) ? `${x.passed} of ${x.total} (${Math.round(Number(x.ratio) * 1000) / 10}%)` : undefined);
  fact('Result', r.result);
  fact('Task', r.task_id);
  fact('Agent', r.agent_id);
  fact('Verified at', r.verified_at);
  fact('Verification id', r.verification_id);
  fact('Schema checks passed', ratio(r.schema_compliance));
  fact('Integrity checks passed', ratio(r.integrity_checks));
  fact('All checks passed', ratio(r.overall));
  if (has(r, 'score')) {
    fact('Trust score', String(r.score));
    if (isObject(r.interval)) fact('Interval', `${r.interval.lower} to ${r.interval.upper}`);
    if (isObject(r.inputs)) fact('Verdicts', `${r.inputs.total} (${r.inputs.passed} passed, ${r.inputs.failed} failed)`);
  }
  $('answer-facts').replaceChildren(...facts);

  const lists = [];
  const section = (title, items, line) => {
    if (!Array.isArray(items) || items.length === 0) return;
    lists.push(el('h4', {}, title), el('ul', { class: 'answer-list' }, ...items.map((x) => el('li', {}, line(x)))));
  };
  section('Why it failed', r.errors, (x) => String(x));
  section('Hints to repair the output', r.hints, (h) => (isObject(h)
    ? `${h.check || ''} at ${h.path || '$'}: expected ${h.expected ?? ''}, found ${h.found ?? ''}` : String(h)));
  section('Flags', r.flags, (f) => (isObject(f) ? `${f.severity || ''} ${f.check || ''} ${f.field || ''}: ${f.detail || ''}` : String(f)));
  section('Recent verdicts', r.recent_verdicts, (v) => (isObject(v) ? `${v.result} ${v.verified_at} task ${v.task_id}` : String(v)));
  $('answer-lists').replaceChildren(...lists);
}

// ---- the form

function readDropped(textarea) {
  textarea.addEventListener('dragover', (e) => { e.preventDefault(); textarea.classList.add('drop-target'); });
  textarea.addEventListener('dragleave', () => textarea.classList.remove('drop-target'));
  textarea.addEventListener('drop', async (e) => {
    e.preventDefault();
    textarea.classList.remove('drop-target');
    const file = e.dataTransfer && e.dataTransfer.files[0];
    if (file) textarea.value = await file.text();
  });
}

function init() {
  readDropped($('receipt'));
  readDropped($('request'));
  readDropped($('log-proof'));
  $('check-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const choice = document.querySelector('input[name="key-source"]:checked').value;
    const button = $('check');
    button.disabled = true;
    try {
      render(await checkReceipt($('receipt').value, $('request').value, choice, $('key').value, $('log-proof').value));
    } catch (err) {
      render({ checks: [{ name: 'Checker', state: 'failed', text: `The page could not finish the check (${err.message}).` }], hashes: [], receipt: null, kind: '', log: null });
    } finally {
      button.disabled = false;
      $('result').focus();
    }
  });
  $('clear').addEventListener('click', () => {
    for (const id of ['receipt', 'request', 'key', 'log-proof']) $(id).value = '';
    $('result').hidden = true;
  });
  $('result').tabIndex = -1;
}

// A verification_id as this page accepts it from its URL: a UUID, or any
// short plain token (the server decides whether it stored one).
const ID_PATTERN = /^[A-Za-z0-9._-]{1,200}$/;

// loadFromURL loads the receipt named by the page's ?id= from this server
// (GET /receipts/{verification_id}) into the form and checks it. The
// status line says what happened, without repeating an id it refused.
async function loadFromURL() {
  const id = new URLSearchParams(location.search).get('id');
  if (id === null || id === '') return;
  const status = $('load-status');
  status.hidden = false;
  if (!ID_PATTERN.test(id)) {
    status.textContent = 'The address names no verification_id this page can load (?id= takes a verification_id, such as the UUID of a receipt). Paste the receipt below instead.';
    return;
  }
  status.textContent = `Loading the receipt with verification_id ${id} from this server…`;
  let res;
  try {
    res = await fetch(`/receipts/${encodeURIComponent(id)}`, { headers: { Accept: 'application/json' }, credentials: 'omit', cache: 'no-cache' });
  } catch (e) {
    status.textContent = `The receipt could not be loaded from this server (${e.message}). Paste it below instead.`;
    return;
  }
  if (res.status === 404) {
    status.textContent = `This server stored no receipt with verification_id ${id}. Paste the receipt below instead.`;
    return;
  }
  if (!res.ok) {
    status.textContent = `The receipt could not be loaded from this server (HTTP ${res.status}). Paste it below instead.`;
    return;
  }
  $('receipt').value = await res.text();
  status.textContent = `Loaded the receipt with verification_id ${id} from this server (GET /receipts/${id}); it is checked below.`;
  $('check-form').requestSubmit();
}

init();
loadFromURL();
