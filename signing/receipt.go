package signing

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// MaxReceiptBytes bounds the receipts VerifyReceipt reads. Canonicalizing
// takes about 100 times the input in memory; real receipts are far smaller.
const MaxReceiptBytes = 4 << 20

// Names of the checks in a ReceiptReport, in the order they run.
const (
	CheckJSON             = "json"               // one I-JSON object, every number exact, no case-folded key twins
	CheckAttestation      = "attestation"        // attestation with exactly its four non-empty string fields
	CheckAlgorithm        = "algorithm"          // attestation.algorithm is Ed25519
	CheckTimestamp        = "timestamp"          // attestation.timestamp equals verified_at
	CheckVerifyKeyVersion = "verify_key_version" // verify.key_version equals attestation.key_version
	CheckKey              = "key"                // a public key is known for key_version
	CheckSignature        = "signature"          // the signature verifies for a known context
)

// Check is one line of a ReceiptReport.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// ReceiptReport says what held when checking a receipt. Context is the
// context the signature verified under; KeyVersion is the receipt's.
type ReceiptReport struct {
	Valid      bool    `json:"valid"`
	Context    string  `json:"context,omitempty"`
	KeyVersion string  `json:"key_version,omitempty"`
	Checks     []Check `json:"checks"`
}

func (r *ReceiptReport) pass(name, detail string) {
	r.Checks = append(r.Checks, Check{Name: name, OK: true, Detail: detail})
}

// fail records a failed check and returns it as an error wrapping sentinel.
func (r *ReceiptReport) fail(name string, sentinel error, format string, args ...any) error {
	detail := fmt.Sprintf(format, args...)
	r.Checks = append(r.Checks, Check{Name: name, Detail: detail})
	return fmt.Errorf("%w: %s", sentinel, detail)
}

// VerifyReceipt checks a receipt offline: an answer with an "attestation"
// object, from this service or any other using the same scheme. It takes the
// receipt minus "attestation", exactly as parsed, rebuilds the signed
// document with SignedDocument for each known context and checks the Ed25519
// signature with the key keys gives for attestation.key_version. It also
// checks the attestation's shape, its algorithm, that its timestamp equals
// the receipt's verified_at (when there is one) and that verify.key_version
// (when there is one) names the same key.
//
// Every mismatch is an error wrapping ErrMalformedReceipt, ErrUnknownKey,
// ErrKeyMismatch or ErrBadSignature (all of them, when several checks fail).
// The report is never nil: it lists each check that ran, passed or failed,
// for display.
//
// The receipt's numbers must each be exactly the float64 that JCS signs
// (1.0 and 0.966667 are; 9007199254740993 and 1e-400 are not) and no object
// may hold two keys equal under case folding; otherwise the signature would
// cover a different value than a reader of the receipt sees.
func VerifyReceipt(receipt []byte, keys KeyResolver) (*ReceiptReport, error) {
	r := &ReceiptReport{Checks: []Check{}}
	if err := r.verify(receipt, keys); err != nil {
		return r, fmt.Errorf("verifying receipt: %w", err)
	}
	r.Valid = true
	return r, nil
}

func (r *ReceiptReport) verify(receipt []byte, keys KeyResolver) error {
	if keys == nil {
		return errors.New("no keys to verify with")
	}
	top, err := receiptObject(receipt, true)
	if err != nil {
		return r.fail(CheckJSON, ErrMalformedReceipt, "%v", err)
	}
	r.pass(CheckJSON, "one I-JSON object, every number exact")
	att, err := r.attestation(top["attestation"])
	if err != nil {
		return err
	}
	r.KeyVersion = att.KeyVersion

	var errs []error
	if att.Algorithm == Algorithm {
		r.pass(CheckAlgorithm, Algorithm)
	} else {
		errs = append(errs, r.fail(CheckAlgorithm, ErrMalformedReceipt, "algorithm is %s, want %s", brief(att.Algorithm), Algorithm))
	}
	if err := r.timestamp(top["verified_at"], att.Timestamp); err != nil {
		errs = append(errs, err)
	}
	if err := r.verifyKeyVersion(top["verify"], att.KeyVersion); err != nil {
		errs = append(errs, err)
	}
	embedded, embeddedErr := embeddedKey(top)
	pub, ok := keys.Lookup(att.KeyVersion)
	switch {
	case embeddedErr != nil && !errors.Is(embeddedErr, ErrNoEmbeddedKey):
		errs = append(errs, r.fail(CheckKey, ErrMalformedReceipt, "%v", embeddedErr))
	case !ok:
		errs = append(errs, r.fail(CheckKey, ErrUnknownKey, "no public key is known for key_version %s", brief(att.KeyVersion)))
	case len(pub) != ed25519.PublicKeySize:
		errs = append(errs, r.fail(CheckKey, ErrUnknownKey, "the public key for key_version %s is %d bytes, want %d",
			brief(att.KeyVersion), len(pub), ed25519.PublicKeySize))
	case embedded != nil && !embedded.Equal(pub):
		errs = append(errs, r.fail(CheckKey, ErrKeyMismatch,
			"the receipt was signed with the key it carries (fingerprint %s), not with the key given for key_version %s (fingerprint %s): it comes from another signer or install",
			Fingerprint(embedded), brief(att.KeyVersion), Fingerprint(pub)))
	default:
		r.pass(CheckKey, "public key "+base64.StdEncoding.EncodeToString(pub)+" (fingerprint "+Fingerprint(pub)+")")
		if att.Algorithm == Algorithm {
			delete(top, "attestation")
			if err := r.signature(pub, att, top); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	// The failed checks as one error on one line, in which errors.Is finds
	// each check's sentinel.
	err = errs[0]
	for _, e := range errs[1:] {
		err = fmt.Errorf("%w; %w", err, e)
	}
	return err
}

// receiptObject checks receipt is at most MaxReceiptBytes of one I-JSON
// object, every number exact when exact is set (checkExact), and decodes
// its members, as canonical raw JSON, by exact name.
func receiptObject(receipt []byte, exact bool) (map[string]json.RawMessage, error) {
	if len(receipt) > MaxReceiptBytes {
		return nil, fmt.Errorf("receipt is %d bytes, more than the %d allowed", len(receipt), MaxReceiptBytes)
	}
	canonical, err := Canonicalize(receipt)
	if err != nil {
		return nil, fmt.Errorf("receipt is not I-JSON: %v", err)
	}
	if exact {
		if err := checkExact(receipt); err != nil {
			return nil, err
		}
	}
	return object(canonical, "receipt")
}

// attestation decodes the attestation: exactly four non-empty strings.
func (r *ReceiptReport) attestation(raw json.RawMessage) (Attestation, error) {
	if raw == nil {
		return Attestation{}, r.fail(CheckAttestation, ErrMalformedReceipt, "receipt has no attestation")
	}
	m, err := object(raw, "attestation")
	if err != nil {
		return Attestation{}, r.fail(CheckAttestation, ErrMalformedReceipt, "%v", err)
	}
	var a Attestation
	fields := []struct {
		name string
		dst  *string
	}{
		{"algorithm", &a.Algorithm}, {"key_version", &a.KeyVersion},
		{"timestamp", &a.Timestamp}, {"signature", &a.Signature},
	}
	for _, f := range fields {
		v, ok := m[f.name]
		if !ok {
			return Attestation{}, r.fail(CheckAttestation, ErrMalformedReceipt, "attestation.%s is missing", f.name)
		}
		if json.Unmarshal(v, f.dst) != nil || *f.dst == "" {
			return Attestation{}, r.fail(CheckAttestation, ErrMalformedReceipt, "attestation.%s is not a non-empty string", f.name)
		}
		delete(m, f.name)
	}
	if len(m) > 0 {
		// Nothing in the attestation is signed, so an extra member could
		// only mislead.
		return Attestation{}, r.fail(CheckAttestation, ErrMalformedReceipt, "attestation has an unknown member %s",
			brief(slices.Sorted(maps.Keys(m))[0]))
	}
	r.pass(CheckAttestation, "algorithm, key_version, timestamp and signature, nothing else")
	return a, nil
}

func (r *ReceiptReport) timestamp(raw json.RawMessage, ts string) error {
	if raw == nil {
		r.pass(CheckTimestamp, "no verified_at in the receipt to compare")
		return nil
	}
	var verifiedAt string
	if json.Unmarshal(raw, &verifiedAt) != nil {
		return r.fail(CheckTimestamp, ErrMalformedReceipt, "verified_at is not a string")
	}
	if verifiedAt != ts {
		return r.fail(CheckTimestamp, ErrMalformedReceipt, "attestation.timestamp %s differs from verified_at %s", brief(ts), brief(verifiedAt))
	}
	r.pass(CheckTimestamp, "equals verified_at "+ts)
	return nil
}

func (r *ReceiptReport) verifyKeyVersion(raw json.RawMessage, kv string) error {
	if raw == nil {
		return nil
	}
	m, err := object(raw, "verify")
	if err != nil {
		return r.fail(CheckVerifyKeyVersion, ErrMalformedReceipt, "%v", err)
	}
	v, ok := m["key_version"]
	if !ok {
		return nil
	}
	var got string
	if json.Unmarshal(v, &got) != nil {
		return r.fail(CheckVerifyKeyVersion, ErrMalformedReceipt, "verify.key_version is not a string")
	}
	if got != kv {
		return r.fail(CheckVerifyKeyVersion, ErrMalformedReceipt, "verify.key_version %s differs from attestation.key_version %s", brief(got), brief(kv))
	}
	r.pass(CheckVerifyKeyVersion, "verify.key_version equals attestation.key_version "+brief(kv))
	return nil
}

// EmbeddedKey returns the public key a receipt carries in verify.public_key
// (answers of a verifier without a public URL: stdio, the CLI) as Keys for
// any key version: ErrNoEmbeddedKey when it carries none. Checking a
// receipt with its own key proves it intact since signing, not who signed
// it: anyone can sign a receipt and embed their key.
func EmbeddedKey(receipt []byte) (Keys, error) {
	top, err := receiptObject(receipt, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedReceipt, err)
	}
	pub, err := embeddedKey(top)
	if err != nil {
		return nil, err
	}
	return Keys{"": pub}, nil
}

// embeddedKey reads verify.public_key of a parsed receipt: ErrNoEmbeddedKey
// when there is none, ErrMalformedReceipt when it is not a key.
func embeddedKey(top map[string]json.RawMessage) (ed25519.PublicKey, error) {
	raw, ok := top["verify"]
	if !ok {
		return nil, ErrNoEmbeddedKey
	}
	verify, err := object(raw, "verify")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedReceipt, err)
	}
	rawKey, ok := verify["public_key"]
	if !ok {
		return nil, ErrNoEmbeddedKey
	}
	var b64 string
	if json.Unmarshal(rawKey, &b64) != nil {
		return nil, fmt.Errorf("%w: verify.public_key is not a string", ErrMalformedReceipt)
	}
	pub, err := decodePublicKey(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: verify.public_key is %v", ErrMalformedReceipt, err)
	}
	return pub, nil
}

// signature checks the signature over the response (the receipt without
// attestation) for each known context.
func (r *ReceiptReport) signature(pub ed25519.PublicKey, att Attestation, response map[string]json.RawMessage) error {
	sig, err := base64.StdEncoding.Strict().DecodeString(att.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return r.fail(CheckSignature, ErrBadSignature, "attestation.signature is not standard base64 of %d bytes", ed25519.SignatureSize)
	}
	// Marshal keeps each member's raw bytes, canonical JSON, so it cannot
	// fail; SignedDocument canonicalizes.
	body, _ := json.Marshal(response)
	for _, c := range contexts {
		doc, err := SignedDocument(c, att.KeyVersion, att.Timestamp, body)
		if err != nil {
			return r.fail(CheckSignature, ErrMalformedReceipt, "%v", err)
		}
		if ed25519.Verify(pub, doc, sig) {
			r.Context = c
			r.pass(CheckSignature, "valid under context "+c)
			return nil
		}
	}
	return r.fail(CheckSignature, ErrBadSignature, "signature does not verify with the key of %s under context %s or %s",
		brief(att.KeyVersion), ContextVerify, ContextTrustScore)
}

// brief quotes s for a message, cut to 80 bytes.
func brief(s string) string {
	const limit = 80
	if len(s) > limit {
		return fmt.Sprintf("%q…", s[:limit])
	}
	return fmt.Sprintf("%q", s)
}
