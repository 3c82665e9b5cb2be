package signing_test

import (
	"crypto/sha256"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/verifier-dev/verifier/signing"
)

// Sign an answer, attach the attestation, and check the receipt offline with
// the published public key, as a buyer would.
func Example() {
	seed := sha256.Sum256([]byte("example seed; a real key comes from a KeyStore"))
	signer, err := signing.NewSigner("v1-2026-11a", seed[:])
	if err != nil {
		log.Fatal(err)
	}
	const verifiedAt = "2026-11-02T10:00:00.000000+00:00"
	answer := []byte(`{"result":"pass","overall":1.0,"verified_at":"` + verifiedAt + `"}`)

	receipt, err := signer.Sign(signing.ContextVerify, answer, verifiedAt)
	if err != nil {
		log.Fatal(err)
	}

	// The buyer has only the receipt and the published key.
	keys, err := signing.KeysFromBase64(signer.KeyVersion(), signer.PublicKey().PublicKey)
	if err != nil {
		log.Fatal(err)
	}
	report, err := signing.VerifyReceipt(receipt, keys)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(report.Valid, report.KeyVersion, report.Context)

	// Any change breaks it.
	tampered := []byte(string(receipt[:11]) + "fail" + string(receipt[15:]))
	if _, err := signing.VerifyReceipt(tampered, keys); err != nil {
		fmt.Println(err)
	}
	// Output:
	// true v1-2026-11a json-schema-verifier/verify-schema-attestation/v1
	// verifying receipt: bad signature: signature does not verify with the key of "v1-2026-11a" under context json-schema-verifier/verify-schema-attestation/v1 or json-schema-verifier/trust-score-attestation/v1
}

// A key store makes its first key on first open; a rotation adds a key and
// keeps the old ones published.
func ExampleRotateKey() {
	data, err := os.MkdirTemp("", "verifier-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(data)
	dir := filepath.Join(data, "keys")
	opts := &signing.KeyStoreOptions{Now: func() time.Time { return time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) }}

	ks, err := signing.OpenKeyStore(dir, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("first key:", ks.Current().KeyVersion())

	pk, err := signing.RotateKey(dir, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rotated to:", pk.KeyVersion)

	ks, err = signing.OpenKeyStore(dir, opts)
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range ks.PublicKeys() {
		fmt.Println("published:", k.KeyVersion, k.Algorithm, k.PublicKeyEncoding)
	}
	// Output:
	// first key: v1-2026-11a
	// rotated to: v2-2026-11b
	// published: v1-2026-11a Ed25519 base64 of the raw 32-byte Ed25519 public key
	// published: v2-2026-11b Ed25519 base64 of the raw 32-byte Ed25519 public key
}
