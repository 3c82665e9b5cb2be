package signing

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
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

// Canonicalize returns the RFC 8785 (JCS) form of one JSON text. It fails on
// anything that is not I-JSON: duplicate keys, invalid UTF-8, lone
// surrogates, numbers out of float64 range, trailing data. Never canonicalize
// a re-marshalled value instead of the raw bytes; that would hide those
// problems.
func Canonicalize(raw []byte) ([]byte, error) {
	return canonicalize(raw, nil)
}

// Canonicalizer canonicalizes one JSON text after another, as Canonicalize
// does, reusing its working memory from one to the next: for a caller with
// several texts in a row, such as the parts of one request. The zero value
// is ready to use; it is not safe for concurrent use.
type Canonicalizer struct {
	scratch canonScratch
}

// Canonicalize is the package's Canonicalize, with c's working memory. The
// result is the caller's; c keeps no reference to it.
func (c *Canonicalizer) Canonicalize(raw []byte) ([]byte, error) {
	return canonicalize(raw, &c.scratch)
}

// AppendCanonical appends the canonical form of raw, as Canonicalize gives
// it, to dst; on error dst is returned unchanged. With it a caller writes
// canonical parts straight into a larger document.
func (c *Canonicalizer) AppendCanonical(dst, raw []byte) ([]byte, error) {
	if raw == nil {
		raw = []byte{}
	}
	if out, err := appendCanonical(dst, raw, 0, &c.scratch); err == nil {
		return out, nil
	}
	out, err := canonicalize(raw, &c.scratch) // for jcs's error, or its answer
	if err != nil {
		return dst, err
	}
	return append(dst, out...), nil
}

// AppendCanonical is Canonicalizer.AppendCanonical with working memory that
// is reused from one call to the next, whichever goroutine makes it: for a
// caller that canonicalizes now and then and keeps no Canonicalizer.
func AppendCanonical(dst, raw []byte) ([]byte, error) {
	c := getCanonicalizer()
	defer putCanonicalizer(c)
	return c.AppendCanonical(dst, raw)
}

// canonicalizers holds spare Canonicalizers for AppendCanonical and
// Attest. Nothing in one reaches a result: every canonicalization resets
// its working memory.
var canonicalizers sync.Pool

func getCanonicalizer() *Canonicalizer {
	if c, ok := canonicalizers.Get().(*Canonicalizer); ok {
		return c
	}
	return new(Canonicalizer)
}

// putCanonicalizer keeps c for another canonicalization, unless one large
// text has left it holding much memory.
func putCanonicalizer(c *Canonicalizer) {
	if c.scratch.footprint() <= maxPooledScratch {
		canonicalizers.Put(c)
	}
}

// maxPooledScratch bounds the working memory a spare Canonicalizer keeps,
// so that one large text does not stay in memory.
const maxPooledScratch = 64 << 10

func canonicalize(raw []byte, s *canonScratch) ([]byte, error) {
	if raw == nil {
		raw = []byte{}
	}
	if out, err := appendCanonical(nil, raw, 0, s); err == nil {
		return out, nil
	}
	// The fast encoder refused raw: let jcs say why, so the error is jcs's
	// own. Should jcs accept it after all, its output is the answer.
	out, err := jcs.Transform(raw)
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

// appendSignedDocument appends SignedDocument's bytes to dst: directly in
// canonical form when it can (signedDocumentFast), by way of jcs otherwise.
// On error dst is returned unchanged.
func appendSignedDocument(dst []byte, context, keyVersion, attestedAt string, response []byte) ([]byte, error) {
	if doc, ok := signedDocumentFast(dst, context, keyVersion, attestedAt, response); ok {
		return doc, nil
	}
	doc, err := signedDocumentJCS(context, keyVersion, attestedAt, response)
	if err != nil {
		return dst, err
	}
	return append(dst, doc...), nil
}

// signedDocumentFast appends the signed document to dst, built directly in
// canonical form: its five names are fixed ASCII and already in sorted
// order, so the document is the three strings and the canonical response
// placed between them. ok is false whenever signedDocumentJCS could fail;
// the caller then runs it for the error. The response is canonicalized one
// level deep, as inside the document, so the nesting limit falls where jcs
// puts it.
func signedDocumentFast(dst []byte, context, keyVersion, attestedAt string, response []byte) (doc []byte, ok bool) {
	for _, v := range [...]string{context, keyVersion, attestedAt} {
		if v == "" || !utf8.ValidString(v) {
			return dst, false
		}
	}
	doc = slices.Grow(dst, len(response)+len(context)+len(keyVersion)+len(attestedAt)+96)
	doc = append(doc, `{"algorithm":"`+Algorithm+`","attested_at":`...)
	doc = appendCanonicalString(doc, attestedAt)
	doc = append(doc, `,"context":`...)
	doc = appendCanonicalString(doc, context)
	doc = append(doc, `,"key_version":`...)
	doc = appendCanonicalString(doc, keyVersion)
	doc = append(doc, `,"response":`...)
	c := getCanonicalizer()
	doc, err := appendCanonical(doc, response, 1, &c.scratch)
	putCanonicalizer(c)
	if err != nil {
		return dst, false
	}
	return append(doc, '}'), true
}

// signedDocumentJCS is SignedDocument by way of jcs.Transform over the
// assembled document: the reference the fast path is tested against, and
// the path that words every error.
func signedDocumentJCS(context, keyVersion, attestedAt string, response []byte) ([]byte, error) {
	for _, f := range [...]struct{ name, value string }{
		{"context", context}, {"key_version", keyVersion}, {"attested_at", attestedAt},
	} {
		if f.value == "" {
			return nil, fmt.Errorf("building signed document: %s is empty", f.name)
		}
		// encoding/json would replace invalid UTF-8 with U+FFFD, so two
		// different inputs could sign the same bytes.
		if !utf8.ValidString(f.value) {
			return nil, fmt.Errorf("building signed document: %s is not valid UTF-8", f.name)
		}
	}
	// Response is spliced in as text, so it must be exactly one JSON value:
	// `1,"context":"x"` would otherwise inject a member. The JCS pass below
	// then applies the strict I-JSON checks to the whole document.
	if !json.Valid(response) {
		return nil, errors.New("building signed document: response is not a single JSON value")
	}
	buf := make([]byte, 0, len(response)+len(context)+len(keyVersion)+len(attestedAt)+96)
	buf = append(buf, `{"context":`...)
	buf = appendJSONString(buf, context)
	buf = append(buf, `,"algorithm":"`+Algorithm+`","key_version":`...)
	buf = appendJSONString(buf, keyVersion)
	buf = append(buf, `,"attested_at":`...)
	buf = appendJSONString(buf, attestedAt)
	buf = append(buf, `,"response":`...)
	buf = append(buf, response...)
	buf = append(buf, '}')
	out, err := jcs.Transform(buf)
	if err != nil {
		return nil, fmt.Errorf("building signed document: %w", err)
	}
	return out, nil
}

// appendJSONString appends s, valid UTF-8, as a JSON string. The escaping
// need not be canonical: the document goes through JCS afterwards.
func appendJSONString(buf []byte, s string) []byte {
	b, _ := json.Marshal(s) // a valid UTF-8 string always marshals
	return append(buf, b...)
}
