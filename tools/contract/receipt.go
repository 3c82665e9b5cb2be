package contract

// VerifyReceiptInput is verify_receipt's arguments: the receipt, and what
// to check it with.
const VerifyReceiptInput = `{"type":"object","additionalProperties":false,"required":["receipt"],"properties":{` +
	`"receipt":{"type":"object","description":"the signed answer exactly as received, attestation included"},` +
	`"request":{"anyOf":[{"type":"object"},{"type":"null"}],"default":null,"description":"the original verification request (the arguments of verify_schema); when given, the hashes are recomputed and the verdict re-run"},` +
	`"public_key":{"type":"string","description":"the signer's Ed25519 public key, standard base64 of its 32 bytes; default: this verifier's published keys, or the key the receipt itself carries (verify.public_key), which proves it intact but not who signed it"},` +
	`"agent_card":{"type":"object","description":"the signer's agent card as published at /.well-known/agent-card.json (this verifier's or the hosted service's): its attestation extension's publicKeys are used; give it or public_key, not both"},` +
	`"log_proof":{"type":"object","description":"the answer of GET /log/proof/{verification_id} of the service that issued the receipt, unchanged: also checks that its transparency log includes the receipt (log_proof, log_checkpoint, log_entry, log_inclusion). The log holds the compact receipt (GET /receipts/{verification_id}, or verify_schema's answer with detail compact); for a full answer, this verifier's stored compact receipt of the verification stands for it when it is exactly the answer without its full-only members"},` +
	`"log_key":{"type":"string","description":"with log_proof: the log's note verifier key, params.transparencyLog.verifierKey of the issuer's agent card; default: that of agent_card when given, else this verifier's own log key when it serves a log"}}}`

// ReceiptReport is verify_receipt's answer: which checks of the receipt
// held.
const ReceiptReport = `{"type":"object","title":"receipt report","description":"Which checks of the receipt held.",` +
	`"required":["valid","checks","request_checked","key_source","attested_result","next_actions"],"properties":{` +
	`"valid":{"type":"boolean","description":"true only when every check held, the transparency log's too when log_proof was given"},` +
	`"context":{"type":"string","description":"the signature context that verified: verify-schema or trust-score attestation"},` +
	`"key_version":{"type":"string"},` +
	`"checks":{"type":"array","items":{"type":"object","required":["name","ok"],"properties":{` +
	`"name":{"type":"string"},"ok":{"type":"boolean"},"detail":{"type":"string"}}}},` +
	`"request_checked":{"type":"boolean","description":"the original request was given: hashes recomputed and verdict re-run"},` +
	`"log_checked":{"type":"boolean","description":"log_proof was given: the checks include the receipt's inclusion in the transparency log"},` +
	`"key_source":{"type":"string","enum":["server","public_key","agent_card","receipt"],"description":"server: one of this verifier's keys; public_key: the key given; agent_card: a key of the card given; receipt: the key the receipt itself carries, so valid means intact since signing, not signed by anyone in particular"},` +
	`"attested_result":{"anyOf":[{"type":"string","enum":["pass","fail"]},{"type":"null"}],"description":"the result the receipt attests (pass or fail) when it is valid; null otherwise"},` +
	`"next_actions":` + nextActionsSchema + `}}`
