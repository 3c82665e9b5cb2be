package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/signing"
)

// TestStdioReceiptStandsAlone: a stdio server's receipt carries its signing
// key and no URL (SPEC §5), and `verifier receipt verify` checks it with no
// card, no key and no key store, saying the key came from the receipt; the
// receipt with its embedded key swapped is refused (the signature fails),
// and a given key that is not the receipt's is refused naming both
// fingerprints.
func TestStdioReceiptStandsAlone(t *testing.T) {
	dir := t.TempDir()
	inW, outR, stderr, done := startStdio(dir)
	c := newMCPLines(inW, outR)
	if err := c.handshake(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	req, err := os.ReadFile(filepath.Join("testdata", "invoice-pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	receipt := c.mustCall(t, "verify_schema", string(req))
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("run = %v\n%s", err, stderr.String())
	}

	var answer struct{ Verify map[string]string }
	if err := json.Unmarshal(receipt, &answer); err != nil {
		t.Fatal(err)
	}
	ownKey := base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(testSeed).Public().(ed25519.PublicKey))
	if answer.Verify["public_key"] != ownKey {
		t.Errorf("verify.public_key = %q, want the signing key %s", answer.Verify["public_key"], ownKey)
	}
	for _, url := range []string{"public_key_url", "mcp"} {
		if v, ok := answer.Verify[url]; ok {
			t.Errorf("verify.%s = %q: a stdio receipt advertises no URL", url, v)
		}
	}

	otherPub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := base64.StdEncoding.EncodeToString(otherPub)
	swapped := bytes.Replace(receipt, []byte(ownKey), []byte(otherKey), 1)
	files := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ownFP := signing.Fingerprint(ed25519.NewKeyFromSeed(testSeed).Public().(ed25519.PublicKey))
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		want     []string // lines of the report
	}{
		{"embedded key", []string{write("receipt.json", receipt)}, 0, []string{
			"ok   key ", "ok   signature ", "receipt valid",
			"note: the key came from the receipt itself (verify.public_key): this proves the receipt is intact since it was signed, not who signed it"}},
		{"embedded key swapped", []string{write("swapped.json", swapped)}, 1, []string{
			"FAIL signature ", "signature does not verify", "receipt NOT valid", "note: the key came from the receipt itself"}},
		{"another key given", []string{"--key", otherKey, write("receipt2.json", receipt)}, 1, []string{
			"FAIL key ", "fingerprint " + ownFP, "fingerprint " + signing.Fingerprint(otherPub), "receipt NOT valid"}},
		{"its own key given", []string{"--key", ownKey, write("receipt3.json", receipt)}, 0, []string{"receipt valid"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// No signing key in the environment and an empty data home: the
			// receipt is all there is to check it with.
			home := t.TempDir()
			env := func(name string) string {
				if name == "XDG_DATA_HOME" {
					return home
				}
				return ""
			}
			var stdout, errOut bytes.Buffer
			err := run(context.Background(), append([]string{"receipt", "verify"}, tt.args...), strings.NewReader(""), &stdout, &errOut, env)
			code := 0
			var ee exitError
			if errors.As(err, &ee) {
				code = ee.code
			} else if err != nil {
				t.Fatalf("run: %v (stderr %s)", err, errOut.String())
			}
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d", code, tt.wantCode)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, stdout.String())
				}
			}
			if entries, _ := os.ReadDir(home); len(entries) > 0 {
				t.Errorf("receipt verify created %v in the data home: it must not need a key store", entries)
			}
		})
	}
}
