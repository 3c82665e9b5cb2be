package payment

import (
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"time"
)

// Defaults of [Config]: a zero field means the value here.
const (
	DefaultFreePerDay         = 1000
	DefaultPriceVerify        = "0.02" // USDC
	DefaultPriceScore         = "0.01" // USDC
	DefaultNetwork            = Mainnet
	DefaultFreeTierMaxBody    = 256 << 10 // bytes
	DefaultMaxTimeoutSeconds  = 60
	DefaultFacilitatorTimeout = 10 * time.Second
)

// Networks a deployment can take payments on: never both at once.
const (
	Mainnet = "mainnet"
	Testnet = "testnet"
)

// usdcDecimals is the number of decimals of USDC on every supported chain.
const usdcDecimals = 6

// Chain is one chain's USDC deployment, as the notes list it (x402-notes §6).
type Chain struct {
	Network string // CAIP-2 id
	Asset   string // USDC contract address (EVM) or mint (Solana)
	// EIP712Name and EIP712Version are the token's EIP-712 domain (EVM only).
	EIP712Name, EIP712Version string
}

// chains returns the EVM and Solana USDC deployments of network.
func chains(network string) (evm, svm Chain) {
	if network == Testnet {
		return Chain{Network: "eip155:84532", Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", EIP712Name: "USDC", EIP712Version: "2"},
			Chain{Network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", Asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"}
	}
	return Chain{Network: "eip155:8453", Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", EIP712Name: "USD Coin", EIP712Version: "2"},
		Chain{Network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", Asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"}
}

// Config is the allowance and payment setup, read once from flags by main.
// Every zero field means its documented default; payment is on exactly when
// a pay-to address is set, and then FacilitatorURL is required.
type Config struct {
	// FreePerDay is each client's free verifications per UTC day. 0 means
	// DefaultFreePerDay; a negative value means no free calls at all.
	FreePerDay int
	// PayToEVM receives payments on Base (a 0x address; a mixed-case address
	// must carry a valid EIP-55 checksum). "" means no EVM payments.
	PayToEVM string
	// PayToSolana receives payments on Solana (a base58 public key). ""
	// means no Solana payments.
	PayToSolana string
	// SolanaFeePayer is the facilitator's fee payer advertised in the Solana
	// requirement (extra.feePayer). "" means: learn it from the facilitator's
	// GET /supported when it is first needed.
	SolanaFeePayer string
	// FacilitatorURL is the x402 facilitator's base URL (POST /verify,
	// POST /settle, GET /supported). Required when payment is on.
	FacilitatorURL string
	// FacilitatorTimeout bounds each call to the facilitator. Default
	// DefaultFacilitatorTimeout.
	FacilitatorTimeout time.Duration
	// FacilitatorAuth authenticates each call to the facilitator (a CDP API
	// key, --facilitator-header). nil: calls carry no credentials.
	FacilitatorAuth Authorizer
	// PriceVerify and PriceScore are prices in USDC as decimal strings
	// ("0.02"), at most 6 decimals. Defaults DefaultPriceVerify and
	// DefaultPriceScore.
	PriceVerify, PriceScore string
	// Network is Mainnet or Testnet. Default DefaultNetwork.
	Network string
	// MaxTimeoutSeconds is the requirements' maxTimeoutSeconds: how long a
	// payment authorization stays valid, so the work and the settlement must
	// fit in it. Default DefaultMaxTimeoutSeconds.
	MaxTimeoutSeconds int
	// TrustProxy takes the client address from X-Forwarded-For.
	TrustProxy bool
	// FreeTierMaxBody is the largest request body served free, in bytes,
	// with payment on (a larger one must be paid). Default
	// DefaultFreeTierMaxBody. With payment off only the HTTP layer's hard
	// limit applies.
	FreeTierMaxBody int64
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("invalid payment configuration")

// PaymentOn reports whether payments are configured (a pay-to address).
func (c Config) PaymentOn() bool { return c.PayToEVM != "" || c.PayToSolana != "" }

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.FreePerDay == 0 {
		c.FreePerDay = DefaultFreePerDay
	}
	if c.FreePerDay < 0 {
		c.FreePerDay = -1
	}
	if c.PriceVerify == "" {
		c.PriceVerify = DefaultPriceVerify
	}
	if c.PriceScore == "" {
		c.PriceScore = DefaultPriceScore
	}
	if c.Network == "" {
		c.Network = DefaultNetwork
	}
	if c.FreeTierMaxBody == 0 {
		c.FreeTierMaxBody = DefaultFreeTierMaxBody
	}
	if c.MaxTimeoutSeconds == 0 {
		c.MaxTimeoutSeconds = DefaultMaxTimeoutSeconds
	}
	if c.FacilitatorTimeout == 0 {
		c.FacilitatorTimeout = DefaultFacilitatorTimeout
	}
	c.FacilitatorURL = strings.TrimRight(c.FacilitatorURL, "/")
	return c
}

// freeLimit is the daily allowance passed to the store (0: none).
func (c Config) freeLimit() int { return max(c.FreePerDay, 0) }

// Validate reports every problem of c (after defaults) in one error that
// wraps ErrConfig; the messages name the flag to fix.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Network != Mainnet && c.Network != Testnet {
		bad("--network must be %q or %q, not %q", Mainnet, Testnet, c.Network)
	}
	if c.PayToEVM != "" {
		if err := checkEVMAddress(c.PayToEVM); err != nil {
			bad("--pay-to-evm: %v", err)
		}
	}
	if c.PayToSolana != "" {
		if err := checkSolanaAddress(c.PayToSolana); err != nil {
			bad("--pay-to-solana: %v", err)
		}
	}
	if c.SolanaFeePayer != "" {
		if err := checkSolanaAddress(c.SolanaFeePayer); err != nil {
			bad("solana fee payer: %v", err)
		}
	}
	switch {
	case c.PaymentOn() && c.FacilitatorURL == "":
		bad("a pay-to address is set but no --facilitator URL: payments cannot be verified or settled")
	case !c.PaymentOn() && c.FacilitatorURL != "":
		bad("--facilitator is set but no --pay-to-evm or --pay-to-solana: payment would stay off")
	case c.FacilitatorURL != "":
		if u, err := url.Parse(c.FacilitatorURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("--facilitator must be an http(s) URL, not %q", c.FacilitatorURL)
		}
	}
	if _, err := atomicAmount(c.PriceVerify); err != nil {
		bad("--price-verify: %v", err)
	}
	if _, err := atomicAmount(c.PriceScore); err != nil {
		bad("--price-score: %v", err)
	}
	if c.FreeTierMaxBody < 0 {
		bad("free-tier body limit must be positive, not %d", c.FreeTierMaxBody)
	}
	if c.MaxTimeoutSeconds < 10 || c.MaxTimeoutSeconds > 3600 {
		bad("maxTimeoutSeconds must be between 10 and 3600, not %d", c.MaxTimeoutSeconds)
	}
	if c.FacilitatorTimeout < 0 {
		bad("facilitator timeout must be positive, not %s", c.FacilitatorTimeout)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrConfig, errors.Join(errs...))
}

// CheckBodyLimit reports an error when the free-tier body limit is above the
// HTTP layer's hard limit hard (the free tier must be the smaller one).
func (c Config) CheckBodyLimit(hard int64) error {
	c = c.withDefaults()
	if c.PaymentOn() && c.FreeTierMaxBody > hard {
		return fmt.Errorf("%w: the free-tier body limit (%d bytes) is above the hard body limit (%d bytes)", ErrConfig, c.FreeTierMaxBody, hard)
	}
	return nil
}

// atomicAmount converts a USDC price such as "0.02" into atomic units
// ("20000"). The price must be positive with at most 6 decimals.
func atomicAmount(price string) (string, error) {
	whole, frac, _ := strings.Cut(price, ".")
	if whole == "" || !allDigits(whole) || !allDigits(frac) || strings.HasSuffix(price, ".") {
		return "", fmt.Errorf("price %q is not a decimal number of USDC such as 0.02", price)
	}
	if len(frac) > usdcDecimals {
		return "", fmt.Errorf("price %q has more than %d decimals (USDC's smallest unit is 0.000001)", price, usdcDecimals)
	}
	n, ok := new(big.Int).SetString(whole+frac+strings.Repeat("0", usdcDecimals-len(frac)), 10)
	if !ok || n.Sign() <= 0 {
		return "", fmt.Errorf("price %q must be above zero", price)
	}
	if n.BitLen() > 128 {
		return "", fmt.Errorf("price %q is too large", price)
	}
	return n.String(), nil
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
