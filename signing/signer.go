package signing

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/verifier-dev/verifier/internal/bufpool"
)

// SeedSize is the length of an Ed25519 seed, the form in which private keys
// are stored and supplied (VERIFIER_SIGNING_KEY).
const SeedSize = ed25519.SeedSize

// PublicKeyEncoding is the encoding of PublicKey.PublicKey, standard base64
// of the 32 raw public-key bytes, in the words the hosted service publishes
// in its agent card: a card from either reads the same (SPEC §5).
const PublicKeyEncoding = "base64 of the raw 32-byte Ed25519 public key"

// Attestation is the "attestation" object of a receipt.
type Attestation struct {
	Algorithm  string `json:"algorithm"`
	KeyVersion string `json:"key_version"`
	Timestamp  string `json:"timestamp"`
	Signature  string `json:"signature"`
}

// PublicKey is a published verification key, the object listed by
// `verifier keys show` and in the agent card.
type PublicKey struct {
	KeyVersion        string `json:"keyVersion"`
	Algorithm         string `json:"algorithm"`
	PublicKey         string `json:"publicKey"`
	PublicKeyEncoding string `json:"publicKeyEncoding"`
}

func newPublicKey(version string, pub ed25519.PublicKey) PublicKey {
	return PublicKey{
		KeyVersion:        version,
		Algorithm:         Algorithm,
		PublicKey:         base64.StdEncoding.EncodeToString(pub),
		PublicKeyEncoding: PublicKeyEncoding,
	}
}

// Signer is an Ed25519 private key with its key version. It is safe for
// concurrent use. Printing it (any fmt verb), logging it with slog or
// marshalling it to JSON shows only the key version and the public key.
type Signer struct {
	version string
	priv    ed25519.PrivateKey
}

// NewSigner returns a Signer for a 32-byte seed. Tests and tools use it for
// fixed keys; the service gets its Signer from KeyStore.Current. The seed is
// copied.
func NewSigner(keyVersion string, seed []byte) (*Signer, error) {
	if keyVersion == "" {
		return nil, errors.New("new signer: key version is empty")
	}
	if len(seed) != SeedSize {
		return nil, fmt.Errorf("new signer: seed is %d bytes, want %d", len(seed), SeedSize)
	}
	return &Signer{version: keyVersion, priv: ed25519.NewKeyFromSeed(seed)}, nil
}

// KeyVersion returns the version that names this key in attestations.
func (s *Signer) KeyVersion() string { return s.version }

// PublicKey returns the key's published form.
func (s *Signer) PublicKey() PublicKey { return newPublicKey(s.version, s.public()) }

// Keys returns the signer's public key as a one-entry Keys, for checking its
// own receipts.
func (s *Signer) Keys() Keys { return Keys{s.version: s.public()} }

func (s *Signer) public() ed25519.PublicKey { return s.priv.Public().(ed25519.PublicKey) }

// Attest signs response, one JSON value (the answer without "attestation"),
// under context (ContextVerify or ContextTrustScore) at attestedAt, which must
// be the answer's verified_at when it has one: receipt checking compares them.
// The signed document is SignedDocument's, the bytes VerifyReceipt checks.
func (s *Signer) Attest(context string, response []byte, attestedAt string) (Attestation, error) {
	if context != ContextVerify && context != ContextTrustScore {
		// Receipts are only checked under the known contexts, so a signature
		// under any other could never be verified.
		return Attestation{}, fmt.Errorf("attesting: unknown context %q", context)
	}
	buf := documentBuffers.Get()
	defer documentBuffers.Put(buf)
	doc, err := appendSignedDocument((*buf)[:0], context, s.version, attestedAt, response)
	*buf = doc
	if err != nil {
		return Attestation{}, fmt.Errorf("attesting: %w", err)
	}
	var sig [signatureTextLen]byte
	base64.StdEncoding.Encode(sig[:], ed25519.Sign(s.priv, doc))
	return Attestation{
		Algorithm:  Algorithm,
		KeyVersion: s.version,
		Timestamp:  attestedAt,
		Signature:  string(sig[:]),
	}, nil
}

// signatureTextLen is the length of an Ed25519 signature in standard
// base64, padding included.
const signatureTextLen = (ed25519.SignatureSize + 2) / 3 * 4

// documentBuffers holds spare buffers for signed documents, which live
// only until they are signed. It holds nothing that reaches a result.
var documentBuffers = bufpool.New(64 << 10)

// String describes the signer by its public half.
func (s Signer) String() string {
	if s.priv == nil {
		return "signing.Signer{}"
	}
	return fmt.Sprintf("signing.Signer{key_version: %q, public_key: %q}",
		s.version, base64.StdEncoding.EncodeToString(s.public()))
}

// Format prints String for every verb (%#v, %x and %q included): fmt
// calls it before String or GoString.
func (s Signer) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// LogValue logs the key version and public key only.
func (s Signer) LogValue() slog.Value {
	if s.priv == nil {
		return slog.GroupValue()
	}
	pk := s.PublicKey()
	return slog.GroupValue(slog.String("key_version", pk.KeyVersion), slog.String("public_key", pk.PublicKey))
}

// MarshalJSON marshals the published PublicKey object.
func (s Signer) MarshalJSON() ([]byte, error) {
	if s.priv == nil {
		return []byte("null"), nil
	}
	return json.Marshal(s.PublicKey())
}

// Sign attests response, a JSON object (the answer without "attestation"),
// as Attest does, and returns its receipt: response with "attestation"
// added as its last member, its own bytes (and so its key order) kept as
// they are. Attest's canonicalization has checked that response is one JSON
// value, so it is not parsed a second time.
func (s *Signer) Sign(context string, response []byte, attestedAt string) ([]byte, error) {
	body := bytes.TrimRight(response, " \t\r\n")
	if len(body) < 2 || body[0] != '{' {
		return nil, errors.New("appending attestation: answer is not a JSON object")
	}
	a, err := s.Attest(context, body, attestedAt)
	if err != nil {
		return nil, err
	}
	return appendAttestation(body, a), nil
}

// appendAttestation adds "attestation": a to body, a JSON object without
// trailing white space.
func appendAttestation(body []byte, a Attestation) []byte {
	att, _ := json.Marshal(a) // four strings: it cannot fail
	out := make([]byte, 0, len(body)+len(att)+len(`,"attestation":`))
	out = append(out, body[:len(body)-1]...)
	out = bytes.TrimRight(out, " \t\r\n")
	if len(bytes.TrimSpace(body[1:len(body)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"attestation":`...)
	out = append(out, att...)
	return append(out, '}')
}
