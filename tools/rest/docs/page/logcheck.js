// The transparency log inclusion check of /check, in plain JS: the same four
// steps as `verifier receipt verify --log-proof` and verify_receipt's
// log_proof (tools/log_check.go), each a check named after the Go one:
//
//   Log proof       the GET /log/proof/{verification_id} answer has its shape
//   Log checkpoint  its checkpoint is a C2SP signed note under the log key
//                   (the card's params.transparencyLog.verifierKey), for a
//                   tree of tree_size records of that log
//   Log entry       the entry is SHA-256 of the receipt's RFC 8785 form
//   Log inclusion   the RFC 6962 inclusion proof leads from the entry's leaf
//                   at log_index to the checkpoint's root hash
//
// Nothing here makes a request: the caller fetches what it needs.
import canonicalize from '/docs/canonicalize.js';

// The Go side's bound (maxLogProofHashes): a tree of 2^62 records has a
// proof of 62 hashes.
const MAX_PROOF_HASHES = 64;
// Ed25519's algorithm byte in a note verifier key (golang.org/x/mod/sumdb/note).
const ALG_ED25519 = 1;
const utf8 = new TextEncoder();

// brief cuts what a pasted card or proof says to 80 characters for the page.
const brief = (s) => (s.length > 80 ? `${s.slice(0, 80)}…` : s);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function bytesOfBase64(s) {
  if (typeof s !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return null;
  try {
    return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}

const sameBytes = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// hash32 decodes a base64 SHA-256 hash, or returns null.
function hash32(s) {
  const b = bytesOfBase64(s);
  return b && b.length === 32 ? b : null;
}

// ---- the proof document

// PROOF_MEMBERS are a GET /log/proof answer's members and their types.
const PROOF_MEMBERS = [
  ['verification_id', 'a string', (v) => typeof v === 'string'],
  ['log_index', 'a whole number', Number.isSafeInteger],
  ['entry', 'a string', (v) => typeof v === 'string'],
  ['tree_size', 'a whole number', Number.isSafeInteger],
  ['inclusion_proof', 'an array of strings', (v) => Array.isArray(v) && v.every((h) => typeof h === 'string')],
  ['checkpoint', 'a string', (v) => typeof v === 'string'],
];

// proofProblem says what is wrong with the shape of a proof document, as
// decodeLogProof does on the Go side, or returns ''.
export function proofProblem(p) {
  if (!isObject(p)) return 'the document is not a JSON object';
  if (Object.keys(p).length > PROOF_MEMBERS.length) return 'the document has members a GET /log/proof answer does not have';
  for (const [name, want, ok] of PROOF_MEMBERS) {
    if (!Object.prototype.hasOwnProperty.call(p, name)) return `${name} is missing`;
    if (!ok(p[name])) return `${name} must be ${want}`;
  }
  if (p.log_index < 0) return 'log_index must not be negative';
  if (p.tree_size <= p.log_index) return 'tree_size must be greater than log_index';
  if (p.inclusion_proof.length > MAX_PROOF_HASHES) return `inclusion_proof has more than ${MAX_PROOF_HASHES} hashes`;
  if (!hash32(p.entry)) return 'entry is not a base64 SHA-256 hash';
  const bad = p.inclusion_proof.findIndex((h) => !hash32(h));
  if (bad >= 0) return `inclusion_proof[${bad}] is not a base64 SHA-256 hash`;
  return '';
}

// ---- C2SP signed notes

// parseVerifierKey reads a note verifier key "<name>+<hash>+<base64>", where
// base64 holds the algorithm byte 0x01 and the 32-byte Ed25519 key, and hash
// is the first 4 bytes of SHA-256(name || "\n" || 0x01 || key) in hex. It
// returns {name, keyHash, publicKey (raw bytes)} or null.
export async function parseVerifierKey(vkey) {
  if (typeof vkey !== 'string') return null;
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+=*)$/.exec(vkey);
  if (!m) return null;
  const [, name, hashHex, b64] = m;
  const key = bytesOfBase64(b64);
  if (!key || key.length !== 33 || key[0] !== ALG_ED25519) return null;
  const digest = await sha256(concat(utf8.encode(`${name}\n`), key));
  const keyHash = digest.slice(0, 4);
  if ([...keyHash].map((b) => b.toString(16).padStart(2, '0')).join('') !== hashHex) return null;
  return { name, keyHash, publicKey: key.slice(1) };
}

// openNote verifies a signed note under key (from parseVerifierKey): the
// text is everything up to the blank line, each signature line after it is
// "— <name> <base64(4-byte key hash || 64-byte signature)>", and one of
// them, of this key's name and hash, must be a valid Ed25519 signature of
// the text. It returns the text, or null.
export async function openNote(note, key) {
  if (typeof note !== 'string' || !note.endsWith('\n')) return null;
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return null;
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  const publicKey = await crypto.subtle.importKey('raw', key.publicKey, { name: 'Ed25519' }, false, ['verify']);
  for (const line of lines) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/]+=*)$/.exec(line);
    if (!m || m[1] !== key.name) continue;
    const sig = bytesOfBase64(m[2]);
    if (!sig || sig.length !== 4 + 64 || !sameBytes(sig.slice(0, 4), key.keyHash)) continue;
    if (await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, sig.slice(4), utf8.encode(text))) return text;
  }
  return null;
}

// parseCheckpoint reads a C2SP tlog-checkpoint body of the log origin:
// origin, tree size and base64 root hash, each on its line (extension
// lines may follow). It returns {size, root} or null.
function parseCheckpoint(text, origin) {
  const lines = text.split('\n');
  if (lines.length < 4 || lines[0] !== origin || !/^(0|[1-9][0-9]*)$/.test(lines[1])) return null;
  const size = Number(lines[1]);
  const root = hash32(lines[2]);
  return Number.isSafeInteger(size) && root ? { size, root } : null;
}

// ---- RFC 6962 hashing

const leafHash = (entry) => sha256(concat(Uint8Array.of(0), entry));
const nodeHash = (left, right) => sha256(concat(Uint8Array.of(1), left, right));

// rootFromInclusionProof computes the root hash of a tree of size records
// from the leaf hash of record index and its inclusion proof (RFC 9162
// §2.1.3.2), or returns null when the proof has the wrong length. Sizes
// stay below 2^53, so the arithmetic is on Numbers, without 32-bit bit
// operators.
export async function rootFromInclusionProof(index, size, leaf, proof) {
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null; // a hash more than the path has
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      // A right edge: climb past the levels where this node has no sibling.
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) { fn /= 2; sn = Math.floor(sn / 2); }
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null; // else a hash fewer than the path needs
}

// ---- the check

// receiptEntry is the log entry of a receipt (an object): SHA-256 of its
// RFC 8785 form, as store.LogEntry makes it.
export async function receiptEntry(receipt) {
  return sha256(utf8.encode(canonicalize(receipt)));
}

// FULL_ONLY_MEMBERS are the members of a full answer its compact form
// lacks (tools.FullOnlyMembers).
const FULL_ONLY_MEMBERS = new Set(['request_hash', 'errors', 'errors_total', 'errors_omitted',
  'errors_detail', 'errors_detail_total', 'errors_detail_omitted',
  'flags', 'flags_total', 'flags_omitted', 'hints', 'hints_total', 'hints_omitted',
  'schema_compliance', 'integrity_checks', 'overall']);

// sameMembers reports whether stored is the logged form of receipt, the
// rule of tools.IsLoggedFormOf: stored without its attestation is receipt
// without its attestation and its full-only members, member for member
// (compared in RFC 8785 form).
function sameMembers(stored, receipt) {
  const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
  const s = Object.keys(stored).filter((k) => k !== 'attestation');
  const r = Object.keys(receipt).filter((k) => k !== 'attestation' && !FULL_ONLY_MEMBERS.has(k));
  return s.length === r.length && s.every((k) => own(receipt, k) && !FULL_ONLY_MEMBERS.has(k) &&
    canonicalize(stored[k]) === canonicalize(receipt[k]));
}

// checkLogInclusion checks that the log includes receipt (a parsed
// object), from proof (a parsed GET /log/proof answer) and the log's note
// verifier key. storedReceipt, when given, is an async function returning
// the compact receipt the issuing server stored for this verification_id
// (or null): when the receipt is the full answer, whose entry is not the
// log's, the entry may be that stored receipt's, provided it says the same
// as this receipt in every member it has. It returns {checks, ok, index,
// treeSize}, checks being {name, state: 'held' | 'failed', text} up to
// the first that failed.
export async function checkLogInclusion(receipt, proof, verifierKey, { storedReceipt } = {}) {
  const checks = [];
  const out = { checks, ok: false, index: null, treeSize: null };
  const held = (name, text) => checks.push({ name, state: 'held', text });
  const failed = (name, text) => { checks.push({ name, state: 'failed', text }); return out; };

  const problem = proofProblem(proof);
  if (problem) return failed('Log proof', `The log proof is not a GET /log/proof/{verification_id} answer: ${problem}.`);
  out.index = proof.log_index;
  out.treeSize = proof.tree_size;
  held('Log proof', `The proof places the receipt at index ${proof.log_index} in a tree of ${proof.tree_size}.`);

  const key = await parseVerifierKey(verifierKey);
  if (!key) return failed('Log checkpoint', 'The log key is not a note verifier key (<name>+<hash>+<base64>): take params.transparencyLog.verifierKey from the agent card.');
  const text = await openNote(proof.checkpoint, key);
  if (text === null) return failed('Log checkpoint', `The checkpoint is not signed by the log key ${brief(key.name)}.`);
  const cp = parseCheckpoint(text, key.name);
  if (!cp || cp.size !== proof.tree_size) return failed('Log checkpoint', `The checkpoint is not a tree of ${proof.tree_size} records of the log ${brief(key.name)}.`);
  held('Log checkpoint', `The checkpoint is signed by the log key ${brief(key.name)}, for a tree of ${cp.size} records.`);

  if (receipt.verification_id !== proof.verification_id) return failed('Log entry', 'The proof is for another verification_id than the receipt\'s.');
  let entry = await receiptEntry(receipt);
  const logged = hash32(proof.entry);
  if (sameBytes(entry, logged)) {
    held('Log entry', 'The log\'s entry is the SHA-256 of this receipt\'s RFC 8785 form.');
  } else {
    const stored = storedReceipt ? await storedReceipt() : null;
    if (!isObject(stored) || !sameBytes(await receiptEntry(stored), logged) || !sameMembers(stored, receipt)) {
      return failed('Log entry', 'The log\'s entry is not the SHA-256 of this receipt\'s RFC 8785 form: the log holds the compact receipt its service serves at GET /receipts/{verification_id}; this receipt is not it.');
    }
    entry = logged;
    held('Log entry', 'The log\'s entry is this verification\'s compact receipt, as this server stores it (GET /receipts/{verification_id}); it says the same as this receipt in every member it has.');
  }

  const root = await rootFromInclusionProof(proof.log_index, proof.tree_size, await leafHash(entry), proof.inclusion_proof.map(hash32));
  if (!root || !sameBytes(root, cp.root)) {
    return failed('Log inclusion', `The inclusion proof does not lead from record ${proof.log_index} to the checkpoint's root.`);
  }
  held('Log inclusion', `The inclusion proof leads from record ${proof.log_index} to the signed checkpoint's root: the log includes the receipt.`);
  out.ok = true;
  return out;
}
