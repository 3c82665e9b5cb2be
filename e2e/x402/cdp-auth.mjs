// The check of the facilitator's "cdp" mode: like Coinbase's facilitator, it
// takes a request only with "Authorization: Bearer <JWT>" signed by the
// operator's CDP API key. The token is checked with jose, independently of
// the verifier's Go signer (golang-jwt): the signature with the public half
// of the key (ES256 for an EC P-256 key, EdDSA for an Ed25519 one), typ JWT,
// kid and sub the key id, iss "cdp", a nonce, nbf <= now < exp with
// exp - nbf <= 120 s, and uris exactly ["<METHOD> <host><path>"] of the
// request it came with.
import { readFileSync } from "node:fs";
import { importSPKI, jwtVerify } from "jose";

// maxLifetime is CDP's token lifetime: a token may not claim a longer one.
const maxLifetime = 120;

// loadCdpAuth reads the key file {"keyId", "alg": "ES256" | "EdDSA",
// "publicKey": "<SPKI PEM>"} and returns check(req): null for a good token,
// else why it is refused.
export async function loadCdpAuth(file) {
  const { keyId, alg, publicKey } = JSON.parse(readFileSync(file, "utf8"));
  if (typeof keyId !== "string" || !keyId || !["ES256", "EdDSA"].includes(alg) || typeof publicKey !== "string") {
    throw new Error(`${file}: want {"keyId": ..., "alg": "ES256" | "EdDSA", "publicKey": "<SPKI PEM>"}`);
  }
  const key = await importSPKI(publicKey, alg);
  return async function check(req) {
    const m = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(req.headers.authorization ?? "");
    if (!m) return "no bearer JWT";
    let payload, protectedHeader;
    try {
      ({ payload, protectedHeader } = await jwtVerify(m[1], key, {
        algorithms: [alg], typ: "JWT", issuer: "cdp", subject: keyId, requiredClaims: ["nbf", "exp", "uris"],
      }));
    } catch (e) {
      return `${e.code ?? "ERR_JWT_INVALID"}: ${e.message}`;
    }
    if (protectedHeader.kid !== keyId) return "kid is not the key id";
    if (typeof protectedHeader.nonce !== "string" || protectedHeader.nonce.length < 16) return "no nonce of 16 characters or more";
    if (payload.exp - payload.nbf > maxLifetime) return `the token lives ${payload.exp - payload.nbf} s, more than ${maxLifetime}`;
    const uri = `${req.method} ${req.headers.host}${new URL(req.url, "http://127.0.0.1").pathname}`;
    if (!Array.isArray(payload.uris) || payload.uris.length !== 1 || payload.uris[0] !== uri) {
      return `uris ${JSON.stringify(payload.uris)} is not ${JSON.stringify([uri])}`;
    }
    return null;
  };
}
