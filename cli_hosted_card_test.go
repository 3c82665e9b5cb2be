package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostedSeed is the seed of the test key that testdata/hosted-agent-card.json
// publishes (testdata/hosted-agent-card.SOURCE), under hostedKeyVersion.
var hostedSeed = bytes.Repeat([]byte{0x68}, 32)

const hostedKeyVersion = "v1-2026-11a"

// hostedDataDir is a data dir whose key store holds the hosted card's key
// as its current key, so that `verifier verify` signs with it.
func hostedDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	seed := base64.StdEncoding.EncodeToString(hostedSeed) + "\n"
	if err := os.WriteFile(filepath.Join(keys, hostedKeyVersion+".key"), []byte(seed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keys, "current"), []byte(hostedKeyVersion+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReceiptVerifyHostedCard: `verifier receipt verify --card` reads the
// hosted service's card as it is published (publicKeyEncoding "base64 of the
// raw 32-byte Ed25519 public key") and verifies a receipt signed with its
// key; a card that names any other encoding is refused, saying so.
func TestReceiptVerifyHostedCard(t *testing.T) {
	noEnv := func(string) string { return "" }
	dir := hostedDataDir(t)
	req, err := os.ReadFile(filepath.Join("testdata", "invoice-pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	var answer, stderr bytes.Buffer
	if err := run(context.Background(), []string{"verify", "--data-dir", dir}, bytes.NewReader(req), &answer, &stderr, noEnv); err != nil {
		t.Fatalf("verify: %v (%s)", err, stderr.String())
	}
	if !strings.Contains(answer.String(), `"key_version":"`+hostedKeyVersion+`"`) && !strings.Contains(answer.String(), `"key_version": "`+hostedKeyVersion+`"`) {
		t.Fatalf("the receipt is not signed with %s: %s", hostedKeyVersion, answer.String())
	}
	receipt := filepath.Join(dir, "receipt.json")
	if err := os.WriteFile(receipt, answer.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	card := filepath.Join("testdata", "hosted-agent-card.json")

	var out bytes.Buffer
	if err := run(context.Background(), []string{"receipt", "verify", "--json", "--card", card, receipt}, nil, &out, &stderr, noEnv); err != nil {
		t.Fatalf("receipt verify --card hosted card: %v; report %s", err, out.String())
	}
	var report struct {
		Valid      bool   `json:"valid"`
		KeyVersion string `json:"key_version"`
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil || !report.Valid || report.KeyVersion != hostedKeyVersion {
		t.Errorf("report %s: want valid with key %s (%v)", out.String(), hostedKeyVersion, err)
	}

	text, err := os.ReadFile(card)
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{"base64", "hex", "base64url of the raw 32-byte Ed25519 public key"} {
		bad := filepath.Join(dir, "card-"+other+".json")
		changed := strings.Replace(string(text), `"base64 of the raw 32-byte Ed25519 public key"`, `"`+other+`"`, 1)
		if err := os.WriteFile(bad, []byte(changed), 0o600); err != nil {
			t.Fatal(err)
		}
		err := run(context.Background(), []string{"receipt", "verify", "--card", bad, receipt}, nil, &bytes.Buffer{}, &bytes.Buffer{}, noEnv)
		want := `publicKeyEncoding is not "base64 of the raw 32-byte Ed25519 public key"`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("card with encoding %q: error %v, want one saying %s", other, err, want)
		}
	}
}
