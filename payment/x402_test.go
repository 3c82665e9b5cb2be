package payment

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Literal JSON examples from x402-notes.md (§8: the PAYMENT-SIGNATURE the
// real @x402/fetch client sent, the server's PaymentRequired and
// SettlementResponse; §8: the facilitator's getSupported()).
const (
	notesPaymentPayload = `{"x402Version":2,
 "payload":{"authorization":{"from":"0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58",
   "to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","value":"10000","validAfter":"0","validBefore":"1796021342",
   "nonce":"0xaf114deeab5704068c029e48bab6b16789c86ada971f8f6dff18558bc461a622"},
   "signature":"0x40e8…4ac91c"},
 "resource":{"url":"http://127.0.0.1:18402/verify-demo","description":"demo verification","mimeType":"application/json"},
 "accepted":{"scheme":"exact","network":"eip155:84532","amount":"10000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e",
   "payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}}}`
	notesPaymentRequired = `{"x402Version":2,"error":"Payment required","resource":{"url":"http://127.0.0.1:18402/verify-demo","description":"demo verification","mimeType":"application/json"},
 "accepts":[{"scheme":"exact","network":"eip155:84532","amount":"10000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e",
   "payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}}]}`
	notesSettleResponse = `{"success":true,"payer":"0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58","transaction":"0x0000000000000000000000000000000000000000000000000000000000000000","network":"eip155:84532"}`
	notesSupported      = `{"kinds":[{"x402Version":2,"scheme":"exact","network":"eip155:84532"}],"extensions":[],"signers":{"eip155:*":["0x0000000000000000000000000000000000000001"]}}`
)

// jsonValue decodes s into a generic value for semantic comparison.
func jsonValue(t *testing.T, s []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(s, &v); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", s, err)
	}
	return v
}

func TestHeaderRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		json   string
		decode func(string) (any, error)
	}{
		{"PaymentRequired", notesPaymentRequired, func(s string) (any, error) { return DecodePaymentRequired(s) }},
		{"PaymentPayload", notesPaymentPayload, func(s string) (any, error) { return DecodePaymentSignature(s) }},
		{"SettleResponse", notesSettleResponse, func(s string) (any, error) { return DecodeSettleResponse(s) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The header as a client or server of the reference SDK sends it.
			header := base64.StdEncoding.EncodeToString([]byte(tt.json))
			v, err := tt.decode(header)
			if err != nil {
				t.Fatalf("decoding the notes' %s: %v", tt.name, err)
			}
			again, err := EncodeHeader(v)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := base64.StdEncoding.DecodeString(again)
			if err != nil {
				t.Fatalf("EncodeHeader gave non-standard base64: %v", err)
			}
			if diff := cmp.Diff(jsonValue(t, []byte(tt.json)), jsonValue(t, raw)); diff != "" {
				t.Errorf("decode then encode changed the JSON (-notes +ours):\n%s", diff)
			}
			if _, err := tt.decode(again); err != nil {
				t.Errorf("decoding our own encoding: %v", err)
			}
		})
	}
}

func TestDecodedFields(t *testing.T) {
	p, err := DecodePaymentSignature(base64.StdEncoding.EncodeToString([]byte(notesPaymentPayload)))
	if err != nil {
		t.Fatal(err)
	}
	var evm EVMPayload
	if err := json.Unmarshal(p.Payload, &evm); err != nil {
		t.Fatal(err)
	}
	if got, want := evm.Authorization.Nonce, "0xaf114deeab5704068c029e48bab6b16789c86ada971f8f6dff18558bc461a622"; got != want {
		t.Errorf("nonce = %s, want %s", got, want)
	}
	if got, want := p.Accepted.Extra["name"], "USDC"; got != want {
		t.Errorf("accepted.extra.name = %v, want %v", got, want)
	}
	if got, want := p.Resource.URL, "http://127.0.0.1:18402/verify-demo"; got != want {
		t.Errorf("resource.url = %s, want %s", got, want)
	}
	if got := jsonValue(t, p.Raw); !cmp.Equal(got, jsonValue(t, []byte(notesPaymentPayload))) {
		t.Errorf("Raw is not the payload as sent")
	}
	var sup SupportedResponse
	if err := json.Unmarshal([]byte(notesSupported), &sup); err != nil {
		t.Fatal(err)
	}
	if len(sup.Kinds) != 1 || sup.Kinds[0].Network != "eip155:84532" || sup.Signers["eip155:*"][0] != "0x0000000000000000000000000000000000000001" {
		t.Errorf("supported = %+v", sup)
	}
}

// TestDecodeExtensionResponsesLiteral decodes the literal base64 header of
// the bazaar spec's EXTENSION-RESPONSES example.
func TestDecodeExtensionResponsesLiteral(t *testing.T) {
	b, err := decodeHeaderJSON("eyJiYXphYXIiOnsic3RhdHVzIjoic3VjY2VzcyJ9fQ==")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"bazaar":{"status":"success"}}`; got != want {
		t.Errorf("decoded = %s, want %s", got, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	// A description with ">>>" and "???" puts + and / in the standard base64.
	payload := []byte(strings.Replace(notesPaymentPayload, "demo verification", "demo >>> ??? verification", 1))
	std := base64.StdEncoding.EncodeToString(payload)
	urlSafe := base64.URLEncoding.EncodeToString(payload)
	if urlSafe == std {
		t.Fatal("precondition: the payload's base64 must differ between alphabets")
	}
	tests := []struct {
		name   string
		header string
		ok     bool
	}{
		{"standard", std, true},
		{"unpadded", strings.TrimRight(std, "="), true},
		{"url-safe alphabet", urlSafe, false},
		{"empty", "", false},
		{"not base64", "{not base64}", false},
		{"too much padding", std + "===", false},
		{"base64 of non-JSON", base64.StdEncoding.EncodeToString([]byte("hello")), false},
		{"payload not an object", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"payload":"x"}`)), false},
		{"no payload", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2}`)), false},
		{"oversized", base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"payload":{"p":"` + strings.Repeat("a", MaxHeaderBytes) + `"}}`)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodePaymentSignature(tt.header)
			if tt.ok && err != nil {
				t.Errorf("DecodePaymentSignature = %v, want success", err)
			}
			if !tt.ok && !errors.Is(err, ErrBadHeader) {
				t.Errorf("DecodePaymentSignature = %v, want ErrBadHeader", err)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	offered := PaymentRequirements{Scheme: "exact", Network: "eip155:84532", Amount: "20000",
		Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		MaxTimeoutSeconds: 60, Extra: map[string]any{"name": "USDC", "version": "2"}}
	change := func(f func(*PaymentRequirements)) PaymentRequirements {
		c := offered
		c.Extra = map[string]any{"name": "USDC", "version": "2"}
		f(&c)
		return c
	}
	tests := []struct {
		name     string
		accepted PaymentRequirements
		want     bool
	}{
		{"verbatim", change(func(*PaymentRequirements) {}), true},
		{"extra added to", change(func(c *PaymentRequirements) { c.Extra["assetTransferMethod"] = "eip3009" }), true},
		{"amount", change(func(c *PaymentRequirements) { c.Amount = "10000" }), false},
		{"payTo", change(func(c *PaymentRequirements) { c.PayTo = "0x0000000000000000000000000000000000000002" }), false},
		{"payTo case", change(func(c *PaymentRequirements) { c.PayTo = strings.ToLower(c.PayTo) }), false},
		{"network", change(func(c *PaymentRequirements) { c.Network = "eip155:8453" }), false},
		{"asset", change(func(c *PaymentRequirements) { c.Asset = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" }), false},
		{"scheme", change(func(c *PaymentRequirements) { c.Scheme = "upto" }), false},
		{"timeout", change(func(c *PaymentRequirements) { c.MaxTimeoutSeconds = 600 }), false},
		{"extra changed", change(func(c *PaymentRequirements) { c.Extra["name"] = "USD Coin" }), false},
		{"extra removed", change(func(c *PaymentRequirements) { delete(c.Extra, "version") }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := offered.matches(tt.accepted); got != tt.want {
				t.Errorf("matches = %v, want %v", got, tt.want)
			}
		})
	}
}
