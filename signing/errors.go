package signing

import "errors"

// Sentinel errors. Errors returned by this package wrap them; test with
// errors.Is.
var (
	// ErrBadSignature means a receipt's signature does not verify under its
	// key for any known context, or is not a base64 Ed25519 signature.
	ErrBadSignature = errors.New("bad signature")
	// ErrUnknownKey means no public key is known for a receipt's key_version.
	ErrUnknownKey = errors.New("unknown key version")
	// ErrKeyMismatch means the key given to check a receipt is not the
	// public key the receipt itself carries (verify.public_key): it was
	// signed by another key — another install, or a replaced key. The
	// error names both keys' fingerprints.
	ErrKeyMismatch = errors.New("key mismatch")
	// ErrNoEmbeddedKey means a receipt carries no public key of its own
	// (verify.public_key): a service with a public URL publishes its keys
	// in its agent card instead.
	ErrNoEmbeddedKey = errors.New("the receipt carries no public key")
	// ErrMalformedReceipt means a receipt is not a well-formed receipt: not a
	// JSON object in I-JSON, no valid "attestation", a wrong algorithm, or a
	// timestamp that differs from verified_at.
	ErrMalformedReceipt = errors.New("malformed receipt")
	// ErrInsecurePermissions means a key file or the key folder can be read
	// (or written) by group or others. The error says which chmod fixes it.
	ErrInsecurePermissions = errors.New("insecure key permissions")
	// ErrInvalidSeed means a supplied seed (VERIFIER_SIGNING_KEY or a key
	// file) is not standard base64 of 32 bytes. The error never contains it.
	ErrInvalidSeed = errors.New("invalid signing key seed")
	// ErrNoKey means OpenKeyStore with NoCreate found no key: the folder is
	// missing or holds no key file, and no env key is set.
	ErrNoKey = errors.New("no signing key")
)
