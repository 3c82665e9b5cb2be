package signing

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/internal/ijson"
)

// Context strings name what a signature is about. They are the exact strings
// of the hosted service, so receipts of either verify with the same code.
const (
	// ContextVerify is the context of verification answers (MCP and REST).
	ContextVerify = "json-schema-verifier/verify-schema-attestation/v1"
	// ContextTrustScore is the context of trust-score answers.
	ContextTrustScore = "json-schema-verifier/trust-score-attestation/v1"
)

// Algorithm is the only signature algorithm: Ed25519 (RFC 8032), pure, no
// pre-hash.
const Algorithm = "Ed25519"

// contexts lists every context VerifyReceipt tries, in the order it tries them.
var contexts = [...]string{ContextVerify, ContextTrustScore}

// Canonicalize returns the RFC 8785 (JCS) form of one JSON text
// (ijson.AppendCanonical). It fails on anything that is not I-JSON:
// duplicate keys, invalid UTF-8, lone surrogates, numbers out of float64
// range, trailing data. Never canonicalize a re-marshalled value instead of
// the raw bytes; that would hide those problems.
func Canonicalize(raw []byte) ([]byte, error) {
	out, err := ijson.AppendCanonical(nil, raw, 0)
	if err != nil {
		return nil, fmt.Errorf("canonicalizing JSON: %w", err)
	}
	return out, nil
}

// HashCanonical returns the lowercase hex SHA-256 of canonical bytes (as made
// by Canonicalize).
func HashCanonical(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	var text [2 * sha256.Size]byte
	hex.Encode(text[:], sum[:])
	return string(text[:])
}

// SignedDocument returns the JCS bytes of exactly
//
//	{"context": context, "algorithm": "Ed25519", "key_version": keyVersion,
//	 "attested_at": attestedAt, "response": response}
//
// where response is one JSON value (normally the answer object without its
// "attestation" key). Signing and verifying both build the bytes here.
func SignedDocument(context, keyVersion, attestedAt string, response []byte) ([]byte, error) {
	return appendSignedDocument(nil, context, keyVersion, attestedAt, response)
}

// appendSignedDocument appends SignedDocument's bytes to dst. The document's
// five names are fixed ASCII and already in sorted order, so it is the
// three strings and the canonical response placed between them; the
// response is canonicalized one level deep, as inside the document, so the
// nesting limit falls where it would for the whole document. On error dst
// is returned unchanged.
func appendSignedDocument(dst []byte, context, keyVersion, attestedAt string, response []byte) ([]byte, error) {
	for _, f := range [...]struct{ name, value string }{
		{"context", context}, {"key_version", keyVersion}, {"attested_at", attestedAt},
	} {
		if f.value == "" {
			return dst, fmt.Errorf("building signed document: %s is empty", f.name)
		}
		// Two different inputs must never sign the same bytes, as they
		// would if invalid UTF-8 were replaced with U+FFFD.
		if !utf8.ValidString(f.value) {
			return dst, fmt.Errorf("building signed document: %s is not valid UTF-8", f.name)
		}
	}
	doc := slices.Grow(dst, len(response)+len(context)+len(keyVersion)+len(attestedAt)+96)
	doc = append(doc, `{"algorithm":"`+Algorithm+`","attested_at":`...)
	doc = ijson.AppendCanonicalString(doc, attestedAt)
	doc = append(doc, `,"context":`...)
	doc = ijson.AppendCanonicalString(doc, context)
	doc = append(doc, `,"key_version":`...)
	doc = ijson.AppendCanonicalString(doc, keyVersion)
	doc = append(doc, `,"response":`...)
	doc, err := ijson.AppendCanonical(doc, response, 1)
	if err != nil {
		return dst, fmt.Errorf("building signed document: the response %w", err)
	}
	return append(doc, '}'), nil
}
