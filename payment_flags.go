package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
)

// paymentFlags are the free-allowance and x402 payment flags of HTTP mode
// (SPEC §7). Stdio mode has no allowance and ignores them.
type paymentFlags struct {
	freePerDay         int
	payToEVM           string
	payToSolana        string
	solanaFeePayer     string
	facilitator        string
	facilitatorTimeout time.Duration
	priceVerify        string
	priceScore         string
	network            string
	trustProxy         bool
	freeMaxBody        int64
}

func (f *paymentFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.freePerDay, "free-per-day", payment.DefaultFreePerDay, "free verifications per client (remote IP) per UTC day, over REST and MCP (0: none) (HTTP)")
	fs.StringVar(&f.payToEVM, "pay-to-evm", "", "turn payments on: the 0x address that receives USDC on Base (HTTP)")
	fs.StringVar(&f.payToSolana, "pay-to-solana", "", "turn payments on: the Solana address that receives USDC (HTTP)")
	fs.StringVar(&f.solanaFeePayer, "solana-fee-payer", "", "the facilitator's Solana fee payer (default: read from the facilitator's /supported)")
	fs.StringVar(&f.facilitator, "facilitator", "", "x402 facilitator base URL (required with a pay-to address)")
	fs.DurationVar(&f.facilitatorTimeout, "facilitator-timeout", payment.DefaultFacilitatorTimeout, "bound on each call to the facilitator; past it the call is a retryable 503")
	fs.StringVar(&f.priceVerify, "price-verify", payment.DefaultPriceVerify, "price of a verification past the free allowance, in USDC")
	fs.StringVar(&f.priceScore, "price-score", payment.DefaultPriceScore, "price of a trust record, in USDC")
	fs.StringVar(&f.network, "network", payment.DefaultNetwork, "where payments are taken: mainnet (Base, Solana) or testnet (Base Sepolia, Solana devnet), never both")
	fs.BoolVar(&f.trustProxy, "trust-proxy", false, "take the client address from X-Forwarded-For (only behind a proxy that sets it)")
	fs.Int64Var(&f.freeMaxBody, "free-max-body", payment.DefaultFreeTierMaxBody, "largest request body served free with payments on, in bytes; larger bodies must be paid (at most --max-body)")
}

// config is the payment configuration the flags describe.
func (f *paymentFlags) config() (payment.Config, error) {
	if f.freePerDay < 0 {
		return payment.Config{}, errors.New("--free-per-day must be 0 or more")
	}
	if f.freeMaxBody <= 0 {
		return payment.Config{}, errors.New("--free-max-body must be positive")
	}
	if f.facilitatorTimeout <= 0 {
		return payment.Config{}, errors.New("--facilitator-timeout must be positive")
	}
	free := f.freePerDay
	if free == 0 {
		free = -1 // payment.Config: negative means no free calls
	}
	return payment.Config{
		FreePerDay: free, PayToEVM: f.payToEVM, PayToSolana: f.payToSolana, SolanaFeePayer: f.solanaFeePayer,
		FacilitatorURL: f.facilitator, FacilitatorTimeout: f.facilitatorTimeout,
		PriceVerify: f.priceVerify, PriceScore: f.priceScore, Network: f.network,
		TrustProxy: f.trustProxy, FreeTierMaxBody: f.freeMaxBody,
	}, nil
}

// gate builds the HTTP mode's payment gate on st; maxBody is --max-body,
// which the free tier's limit may not exceed.
func (f *paymentFlags) gate(st store.Store, maxBody int64, log *slog.Logger) (*payment.Gate, error) {
	cfg, err := f.config()
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckBodyLimit(maxBody); err != nil {
		return nil, fmt.Errorf("--free-max-body: %w", err)
	}
	g, err := payment.NewGate(cfg, st, nil, &http.Client{})
	if err != nil {
		return nil, err
	}
	if g.PaymentOn() {
		log.Info("payments on (x402 v2)", "network", cfg.Network, "networks", g.Networks(), "price_verify", cfg.PriceVerify+" USDC",
			"price_score", cfg.PriceScore+" USDC", "facilitator", cfg.FacilitatorURL, "free_per_day", f.freePerDay)
	} else {
		log.Info("payments off: past the free allowance clients get rate_limited", "free_per_day", f.freePerDay)
	}
	return g, nil
}
