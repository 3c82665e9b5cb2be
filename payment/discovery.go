package payment

import "context"

// WellKnown is the GET /.well-known/x402 document: x402scan's fan-out
// format (version 1, resources) extended with the live configuration.
type WellKnown struct {
	Version       int                `json:"version"`     // 1: x402scan's document version
	X402Version   int                `json:"x402Version"` // the protocol spoken
	Resources     []string           `json:"resources"`   // URLs of the paid routes (none with payment off)
	Payment       string             `json:"payment"`     // "on" or "off"
	Network       string             `json:"network,omitempty"`
	FreeAllowance WellKnownAllowance `json:"free_allowance"`
	Routes        []WellKnownRoute   `json:"routes"`
	PayTo         map[string]string  `json:"pay_to,omitempty"` // "evm", "solana" → address
	Assets        []WellKnownAsset   `json:"assets,omitempty"`
}

// WellKnownAllowance describes the free allowance.
type WellKnownAllowance struct {
	CallsPerClientPerDay int    `json:"calls_per_client_per_day"`
	Resets               string `json:"resets"`
	Covers               string `json:"covers"`
	MaxFreeBodyBytes     int64  `json:"max_free_body_bytes,omitempty"`
}

// WellKnownRoute is one paid route or tool.
type WellKnownRoute struct {
	Resource string                `json:"resource"`
	Method   string                `json:"method,omitempty"`
	Tool     string                `json:"tool,omitempty"`
	Kind     string                `json:"kind"`
	Price    string                `json:"price"`    // USDC, decimal
	Currency string                `json:"currency"` // "USDC"
	Free     bool                  `json:"free"`     // free (payment off)
	Accepts  []PaymentRequirements `json:"accepts,omitempty"`
}

// WellKnownAsset is a token payments are taken in.
type WellKnownAsset struct {
	Network  string            `json:"network"`
	Asset    string            `json:"asset"`
	Symbol   string            `json:"symbol"`
	Decimals int               `json:"decimals"`
	EIP712   map[string]string `json:"eip712,omitempty"`
}

// WellKnown builds the GET /.well-known/x402 document for routes from the
// live configuration. A Solana requirement whose fee payer cannot be
// learned from the facilitator is left out of accepts (pay_to still
// lists the address).
func (g *Gate) WellKnown(ctx context.Context, routes []Route) WellKnown {
	doc := WellKnown{Version: 1, X402Version: X402Version, Resources: []string{}, Payment: "off", Routes: []WellKnownRoute{}}
	doc.FreeAllowance = WellKnownAllowance{CallsPerClientPerDay: g.cfg.freeLimit(), Resets: "00:00 UTC", Covers: freeCovers}
	if g.PaymentOn() {
		doc.Payment, doc.Network = "on", g.cfg.Network
		doc.FreeAllowance.MaxFreeBodyBytes = g.cfg.FreeTierMaxBody
		doc.PayTo = map[string]string{}
		if g.cfg.PayToEVM != "" {
			doc.PayTo["evm"] = g.cfg.PayToEVM
			doc.Assets = append(doc.Assets, WellKnownAsset{Network: g.evm.Network, Asset: g.evm.Asset, Symbol: "USDC", Decimals: usdcDecimals,
				EIP712: map[string]string{"name": g.evm.EIP712Name, "version": g.evm.EIP712Version}})
		}
		if g.cfg.PayToSolana != "" {
			doc.PayTo["solana"] = g.cfg.PayToSolana
			doc.Assets = append(doc.Assets, WellKnownAsset{Network: g.svm.Network, Asset: g.svm.Asset, Symbol: "USDC", Decimals: usdcDecimals})
		}
	}
	for _, r := range routes {
		wr := WellKnownRoute{Resource: r.resource().URL, Method: r.Method, Tool: r.Tool, Kind: r.Kind.String(),
			Price: g.Price(r.Kind), Currency: "USDC", Free: !g.PaymentOn()}
		if g.PaymentOn() {
			wr.Accepts, _ = g.offers(ctx, r.Kind)
			if r.Tool == "" {
				doc.Resources = append(doc.Resources, wr.Resource)
			}
		}
		doc.Routes = append(doc.Routes, wr)
	}
	return doc
}

// PaymentInfo is the OpenAPI x-payment-info of a paid operation of kind
// (nil with payment off): the fixed price in USD terms and the x402
// protocol, in the form discovery crawlers read.
func (g *Gate) PaymentInfo(kind Kind) map[string]any {
	if !g.PaymentOn() {
		return nil
	}
	return map[string]any{
		"pricingMode": "fixed",
		"price":       map[string]any{"mode": "fixed", "currency": "USD", "amount": g.Price(kind)},
		"protocols":   []any{map[string]any{"x402": map[string]any{"x402Version": X402Version, "networks": g.networks()}}},
	}
}

func (g *Gate) networks() []string {
	var n []string
	if g.cfg.PayToEVM != "" {
		n = append(n, g.evm.Network)
	}
	if g.cfg.PayToSolana != "" {
		n = append(n, g.svm.Network)
	}
	return n
}
