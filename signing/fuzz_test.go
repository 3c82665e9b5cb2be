package signing

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/verifier-dev/verifier/internal/ijson"
)

// FuzzVerifyReceipt: arbitrary bytes never panic, the report agrees with the
// error, every error wraps a sentinel, and a receipt that verifies still
// verifies in its canonical form. Seeds are in testdata/fuzz/FuzzVerifyReceipt.
func FuzzVerifyReceipt(f *testing.F) {
	s := testSigner(f)
	keys := s.Keys()
	const at = "2026-11-01T00:00:00.000000+00:00"
	f.Add(sign(f, s, ContextVerify, []byte(`{"result":"pass","n":1.0,"verified_at":"`+at+`"}`), at))
	f.Add(sign(f, s, ContextTrustScore, []byte(`{"score":[1,2,{"a":null}]}`), at))
	// It carries another signer's key: ErrKeyMismatch.
	f.Add(sign(f, s, ContextVerify, []byte(`{"verify":{"public_key":"`+base64.StdEncoding.EncodeToString(make([]byte, 32))+`"}}`), at))
	f.Fuzz(func(t *testing.T, data []byte) {
		report, err := VerifyReceipt(data, keys)
		if report == nil {
			t.Fatal("nil report")
		}
		if report.Valid != (err == nil) {
			t.Fatalf("report.Valid = %v with error %v", report.Valid, err)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformedReceipt) && !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrUnknownKey) && !errors.Is(err, ErrKeyMismatch) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if report.Context != ContextVerify && report.Context != ContextTrustScore {
			t.Fatalf("valid under unknown context %q", report.Context)
		}
		canonical, err := Canonicalize(data)
		if err != nil {
			t.Fatalf("a valid receipt does not canonicalize: %v", err)
		}
		if _, err := VerifyReceipt(canonical, keys); err != nil {
			t.Fatalf("the canonical form of a valid receipt fails: %v", err)
		}
	})
}

// FuzzCanonicalize: canonicalization never panics and is idempotent.
func FuzzCanonicalize(f *testing.F) {
	for _, seed := range []string{`{"b":[1.0,-0,1e21,"\u00e9"],"a":{}}`, `"\ud83d\ude00"`, `[1e-7, 5e-324]`, `{"a":1,"a":2}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		once, err := Canonicalize(data)
		if err != nil {
			return
		}
		twice, err := Canonicalize(once)
		if err != nil {
			t.Fatalf("canonical form %q does not canonicalize: %v", once, err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent: %q then %q", once, twice)
		}
	})
}

// FuzzAppendCanonical: an ijson.Canonicalizer used for one text after
// another, and ijson.AppendCanonical with its pool of them, append to what a
// buffer holds exactly what Canonicalize gives, and fail exactly when it
// fails, leaving the buffer as it was.
func FuzzAppendCanonical(f *testing.F) {
	for _, seed := range []string{`{"b":[1.0,-0,1e21,"\u00e9"],"a":{}}`, `"\ud83d\ude00"`, `[1e-7, 5e-324]`, `{"a":1,"a":2}`, `{"z":{"y":1,"x":2}}`, ``, `1 2`} {
		f.Add([]byte(seed), []byte(`{"a":[3,2,1]}`))
	}
	var c ijson.Canonicalizer // kept across inputs, as across the parts of a request
	f.Fuzz(func(t *testing.T, first, second []byte) {
		const prefix = `{"part":`
		for _, data := range [][]byte{first, second} {
			want, wantErr := Canonicalize(data)
			got, err := c.Append([]byte(prefix), data, 0)
			if (err == nil) != (wantErr == nil) || (err != nil && wantErr.Error() != "canonicalizing JSON: "+err.Error()) {
				t.Fatalf("Canonicalizer.Append(%q) error %v, Canonicalize error %v", data, err, wantErr)
			}
			if err != nil {
				want = nil
			}
			if string(got) != prefix+string(want) {
				t.Fatalf("Canonicalizer.Append(%q) = %q, want %q", data, got, prefix+string(want))
			}
			// The same with working memory shared through a pool.
			got, err = ijson.AppendCanonical([]byte(prefix), data, 0)
			if (err == nil) != (wantErr == nil) || string(got) != prefix+string(want) {
				t.Fatalf("ijson.AppendCanonical(%q) = %q, %v; want %q, %v", data, got, err, prefix+string(want), wantErr)
			}
		}
	})
}
