package tools

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/signing"
)

// TestCanonicalFormsAsRequests sends the canonical form of each published
// request-hash vector (every unused member written as null) as a request,
// over REST and over MCP: each is accepted and answers with the vector's
// request_hash (SPEC §1, §5).
func TestCanonicalFormsAsRequests(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	c := connectMCP(t, quietService(t, true))
	for _, name := range []string{"tv-1", "tv-2", "tv-3"} {
		body := readTestdata(t, "request-hash/"+name+".canonical.json")
		want := strings.TrimSpace(string(readTestdata(t, "request-hash/"+name+".sha256")))
		t.Run(name+"/REST", func(t *testing.T) {
			resp, got := f.postJSON(t, "/verify/schema", body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", resp.StatusCode, got)
			}
			if h := decodeObject(t, got)["request_hash"]; h != want {
				t.Errorf("request_hash = %v, want %s", h, want)
			}
		})
		t.Run(name+"/MCP", func(t *testing.T) {
			res := c.call(t, ToolVerifySchema, string(body))
			if res.IsError {
				t.Fatalf("isError: %s", text(res))
			}
			if h := structured(t, res)["request_hash"]; h != want {
				t.Errorf("request_hash = %v, want %s", h, want)
			}
		})
	}
}

// TestVerifyReceiptHostedCard: verify_receipt takes the signer's agent card
// as the hosted service publishes it (testdata/hosted-agent-card.json, whose
// key is the test key of seed 32 × 0x68) and verifies a receipt signed with
// its key; a card naming another publicKeyEncoding is refused as a field
// problem that says which encoding is read.
func TestVerifyReceiptHostedCard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	seed := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x68}, 32))
	if err := os.WriteFile(filepath.Join(dir, "v1-2026-11a.key"), []byte(seed+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "current"), []byte("v1-2026-11a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hostedKeys, err := signing.OpenKeyStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	signer := quietService(t, false)
	signer.Keys = hostedKeys
	res := connectMCP(t, signer).call(t, ToolVerifySchema, string(readTestdata(t, "invoice-pass.json")))
	if res.IsError {
		t.Fatalf("verify_schema: %s", text(res))
	}
	receipt := structuredJSON(t, res)
	card := readTestdata(t, "hosted-agent-card.json")

	c := connectMCP(t, quietService(t, false)) // its own keys: only the card can verify
	report := structured(t, c.call(t, ToolVerifyReceipt, `{"receipt":`+string(receipt)+`,"agent_card":`+string(card)+`}`))
	if report["valid"] != true || report["key_source"] != "agent_card" || report["key_version"] != "v1-2026-11a" {
		t.Errorf("verify_receipt with the hosted card = %v, want valid, key_source agent_card, key v1-2026-11a", report)
	}
	without := structured(t, c.call(t, ToolVerifyReceipt, `{"receipt":`+string(receipt)+`}`))
	if without["valid"] != false {
		t.Errorf("verify_receipt with the server's own keys = %v, want not valid (the precondition of the check above)", without)
	}

	bad := strings.Replace(string(card), `"base64 of the raw 32-byte Ed25519 public key"`, `"base64"`, 1)
	res = c.call(t, ToolVerifyReceipt, `{"receipt":`+string(receipt)+`,"agent_card":`+bad+`}`)
	wantError(t, res, CodeInvalidRequest, 422, "agent_card")
	if !strings.Contains(text(res), `base64 of the raw 32-byte Ed25519 public key`) {
		t.Errorf("the refusal does not say which encoding is read: %s", text(res))
	}
	res = c.call(t, ToolVerifyReceipt, `{"receipt":`+string(receipt)+`,"agent_card":`+string(card)+`,"public_key":"`+seed+`"}`)
	wantError(t, res, CodeInvalidRequest, 422, "agent_card")
}

// TestVerifyBlockServiceName: verify.service is the hosted service's name,
// in full and compact answers.
func TestVerifyBlockServiceName(t *testing.T) {
	c := connectMCP(t, quietService(t, false))
	for _, detail := range []string{"full", "compact"} {
		ans := structured(t, c.call(t, ToolVerifySchema, string(withDetail(t, readTestdata(t, "invoice-pass.json"), detail))))
		verify, _ := ans["verify"].(map[string]any)
		if verify["service"] != "Agent Output Verifier" {
			t.Errorf("%s answer: verify.service = %v, want \"Agent Output Verifier\"", detail, verify["service"])
		}
	}
}
