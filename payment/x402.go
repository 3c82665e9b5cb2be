package payment

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// X402Version is the protocol version this package speaks.
const X402Version = 2

// HTTP headers of x402 v2 (header names are case-insensitive).
const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"  // server → client on a 402: base64 JSON PaymentRequired
	HeaderPaymentSignature = "PAYMENT-SIGNATURE" // client → server on the retry: base64 JSON PaymentPayload
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"  // server → client on the answer: base64 JSON SettleResponse
)

// MCP _meta keys of x402 v2 (plain JSON objects, not base64).
const (
	MetaPayment         = "x402/payment"          // request params._meta: the PaymentPayload
	MetaPaymentResponse = "x402/payment-response" // result._meta: the SettleResponse
)

// SchemeExact is the only payment scheme offered.
const SchemeExact = "exact"

// MaxHeaderBytes bounds an encoded payment header or _meta payment: an EVM
// payload is about 1 KiB, a Solana one about 2 KiB.
const MaxHeaderBytes = 32 << 10

// Resource describes the paid resource (PaymentRequired.resource). The
// last three members are the bazaar extension's service metadata
// (specs/extensions/bazaar.md, "Service Metadata on resource"), which a
// facilitator catalog shows: printable ASCII, serviceName and each tag at
// most 32 characters, at most 5 tags, iconUrl an absolute http(s) URL.
type Resource struct {
	URL         string   `json:"url"`
	Description string   `json:"description,omitempty"`
	MimeType    string   `json:"mimeType,omitempty"`
	ServiceName string   `json:"serviceName,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	IconURL     string   `json:"iconUrl,omitempty"`
}

// PaymentRequirements is one way to pay (an entry of accepts). Amount is a
// decimal string in the asset's atomic units.
type PaymentRequirements struct {
	Scheme            string         `json:"scheme"`
	Network           string         `json:"network"`
	Amount            string         `json:"amount"`
	Asset             string         `json:"asset"`
	PayTo             string         `json:"payTo"`
	MaxTimeoutSeconds int            `json:"maxTimeoutSeconds"`
	Extra             map[string]any `json:"extra,omitempty"`
}

// Extension is one PaymentRequired extension: info and a JSON Schema of it.
type Extension struct {
	Info          any    `json:"info"`
	Schema        any    `json:"schema"`
	RouteTemplate string `json:"routeTemplate,omitempty"`
}

// PaymentRequired is what a 402 carries in the PAYMENT-REQUIRED header, and
// an MCP payment-required tool result as structured content.
type PaymentRequired struct {
	X402Version int                   `json:"x402Version"`
	Error       string                `json:"error,omitempty"`
	Resource    *Resource             `json:"resource,omitempty"`
	Accepts     []PaymentRequirements `json:"accepts"`
	Extensions  map[string]Extension  `json:"extensions,omitempty"`
}

// PaymentPayload is what a paying client sends: the requirement it chose,
// copied verbatim into Accepted, and the scheme's signed Payload. Raw keeps
// the JSON as received; it is what the facilitator is sent.
type PaymentPayload struct {
	X402Version int                        `json:"x402Version"`
	Resource    *Resource                  `json:"resource,omitempty"`
	Accepted    PaymentRequirements        `json:"accepted"`
	Payload     json.RawMessage            `json:"payload"`
	Extensions  map[string]json.RawMessage `json:"extensions,omitempty"`
	Raw         json.RawMessage            `json:"-"`
}

// EVMPayload is the exact scheme's EIP-3009 payload on EVM chains.
type EVMPayload struct {
	Signature     string           `json:"signature"`
	Authorization EVMAuthorization `json:"authorization"`
}

// EVMAuthorization is the signed TransferWithAuthorization message; the
// numbers are decimal strings and Nonce is 32 bytes of 0x hex.
type EVMAuthorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// SVMPayload is the exact scheme's payload on Solana: a base64 partially
// signed versioned transaction.
type SVMPayload struct {
	Transaction string `json:"transaction"`
}

// VerifyResponse is the facilitator's answer to POST /verify.
type VerifyResponse struct {
	IsValid        bool            `json:"isValid"`
	InvalidReason  string          `json:"invalidReason,omitempty"`
	InvalidMessage string          `json:"invalidMessage,omitempty"`
	Payer          string          `json:"payer,omitempty"`
	Extensions     json.RawMessage `json:"extensions,omitempty"`
}

// SettleResponse is the facilitator's answer to POST /settle, and what the
// PAYMENT-RESPONSE header and the MCP x402/payment-response carry.
// Transaction is the transaction hash (EVM) or signature (Solana), "" on
// failure.
type SettleResponse struct {
	Success      bool            `json:"success"`
	ErrorReason  string          `json:"errorReason,omitempty"`
	ErrorMessage string          `json:"errorMessage,omitempty"`
	Payer        string          `json:"payer,omitempty"`
	Transaction  string          `json:"transaction"`
	Network      string          `json:"network"`
	Amount       string          `json:"amount,omitempty"`
	Extensions   json.RawMessage `json:"extensions,omitempty"`
}

// SupportedKind is one entry of the facilitator's GET /supported.
type SupportedKind struct {
	X402Version int            `json:"x402Version"`
	Scheme      string         `json:"scheme"`
	Network     string         `json:"network"`
	Extra       map[string]any `json:"extra,omitempty"`
}

// SupportedResponse is the facilitator's GET /supported answer.
type SupportedResponse struct {
	Kinds      []SupportedKind     `json:"kinds"`
	Extensions []string            `json:"extensions,omitempty"`
	Signers    map[string][]string `json:"signers,omitempty"`
}

// ErrBadHeader is wrapped by every header decoding error.
var ErrBadHeader = errors.New("malformed x402 header")

// EncodeHeader is the x402 header value of v: standard base64 (with +/ and
// padding) of its JSON.
func EncodeHeader(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding x402 header: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// decodeHeaderJSON undoes EncodeHeader: standard base64 only (URL-safe
// base64 is refused, as the reference clients do); padding may be left out.
func decodeHeaderJSON(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > MaxHeaderBytes*4/3+4 {
		return nil, fmt.Errorf("%w: empty or longer than %d bytes", ErrBadHeader, MaxHeaderBytes)
	}
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil || len(s)-len(strings.TrimRight(s, "=")) > 2 {
		return nil, fmt.Errorf("%w: not standard base64", ErrBadHeader)
	}
	return b, nil
}

// DecodePaymentRequired decodes a PAYMENT-REQUIRED header value.
func DecodePaymentRequired(s string) (*PaymentRequired, error) {
	b, err := decodeHeaderJSON(s)
	if err != nil {
		return nil, err
	}
	var pr PaymentRequired
	if err := json.Unmarshal(b, &pr); err != nil {
		return nil, fmt.Errorf("%w: PaymentRequired: %v", ErrBadHeader, err)
	}
	return &pr, nil
}

// DecodeSettleResponse decodes a PAYMENT-RESPONSE header value.
func DecodeSettleResponse(s string) (*SettleResponse, error) {
	b, err := decodeHeaderJSON(s)
	if err != nil {
		return nil, err
	}
	var sr SettleResponse
	if err := json.Unmarshal(b, &sr); err != nil {
		return nil, fmt.Errorf("%w: SettleResponse: %v", ErrBadHeader, err)
	}
	return &sr, nil
}

// DecodePaymentSignature decodes a PAYMENT-SIGNATURE header value.
func DecodePaymentSignature(s string) (*PaymentPayload, error) {
	b, err := decodeHeaderJSON(s)
	if err != nil {
		return nil, err
	}
	return ParsePaymentPayload(b)
}

// ParsePaymentPayload parses a PaymentPayload from JSON (the decoded header,
// or MCP's _meta["x402/payment"]) and keeps the bytes in Raw.
func ParsePaymentPayload(b []byte) (*PaymentPayload, error) {
	if len(b) > MaxHeaderBytes {
		return nil, fmt.Errorf("%w: payment payload longer than %d bytes", ErrBadHeader, MaxHeaderBytes)
	}
	var p PaymentPayload
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: PaymentPayload: %v", ErrBadHeader, err)
	}
	if len(p.Payload) == 0 || p.Payload[0] != '{' {
		return nil, fmt.Errorf("%w: PaymentPayload has no payload object", ErrBadHeader)
	}
	var raw bytes.Buffer
	if err := json.Compact(&raw, b); err != nil {
		return nil, fmt.Errorf("%w: PaymentPayload: %v", ErrBadHeader, err)
	}
	p.Raw = raw.Bytes()
	return &p, nil
}

// matches reports whether accepted is what was offered: every field equal,
// and accepted's extra containing all of offered's (x402's own rule; a
// client may add to extra but not change it).
func (offered PaymentRequirements) matches(accepted PaymentRequirements) bool {
	if offered.Scheme != accepted.Scheme || offered.Network != accepted.Network ||
		offered.Amount != accepted.Amount || offered.Asset != accepted.Asset ||
		offered.PayTo != accepted.PayTo || offered.MaxTimeoutSeconds != accepted.MaxTimeoutSeconds {
		return false
	}
	for k, v := range offered.Extra {
		got, ok := accepted.Extra[k]
		if !ok || !reflect.DeepEqual(jsonNormal(v), jsonNormal(got)) {
			return false
		}
	}
	return true
}

// jsonNormal is v as encoding/json would decode it, so values built in Go
// compare equal to decoded ones.
func jsonNormal(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}
