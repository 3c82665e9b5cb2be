// Package signing makes and checks the verifier's signed receipts.
//
// A receipt is an answer (a JSON object) with an "attestation" object added:
//
//	{"algorithm": "Ed25519", "key_version": K, "timestamp": T, "signature": S}
//
// S is the standard base64 Ed25519 signature over the RFC 8785 (JCS) bytes of
// exactly the five-key document
//
//	{"context": C, "algorithm": "Ed25519", "key_version": K, "attested_at": T,
//	 "response": <the answer without its "attestation" key>}
//
// where C is [ContextVerify] for verification answers and [ContextTrustScore]
// for trust-score answers. [SignedDocument] builds that document; signing
// ([Signer.Attest]) and checking ([VerifyReceipt]) both call it, so the two
// can never disagree about the bytes. The scheme is the published one of the
// hosted service, so [VerifyReceipt] checks receipts of any service that uses
// it, given that service's public key ([KeysFromBase64], [KeysFromAgentCard]).
//
// Keys live in a [KeyStore], a folder (normally <data-dir>/keys) holding one
// file per key version and a "current" pointer. Key versions are named
//
//	v<N>-<YYYY-MM><letter>     e.g. v1-2026-11a, v2-2026-11b, v3-2026-12a
//
// where N counts keys (1 for the first, +1 per rotation), YYYY-MM is the UTC
// month the key was made, and the letter says which key of that month it is
// (a for the first, b for the second, …, z, then aa, ab, …). A key supplied
// through VERIFIER_SIGNING_KEY instead is named env-<h>, h being the first 8
// lowercase hex digits of SHA-256 over the 32 raw public-key bytes, so every
// replica that shares the seed reports the same version.
//
// The package never writes a private key anywhere but its own key files: a
// [Signer] prints, logs and marshals as its public half only, and no error
// carries key material.
package signing
