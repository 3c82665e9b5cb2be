package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
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
	facilitatorHeaders []string
	facilitatorCheck   bool
	cdpKeyID           string
	cdpKeyFile         string
	// getenv reads CDP_API_KEY_ID, CDP_API_KEY_SECRET and the variables of
	// --facilitator-header values; nil reads none.
	getenv func(string) string
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
	fs.Func("facilitator-header", "`'Name: value'` header sent with every call to the facilitator, e.g. an API key (repeatable; $VAR and ${VAR} in the value are read from the environment, $$ is a $)", func(v string) error {
		f.facilitatorHeaders = append(f.facilitatorHeaders, v)
		return nil
	})
	fs.BoolVar(&f.facilitatorCheck, "facilitator-check", true, "with payments on, refuse to start unless the facilitator's GET /supported answers, accepts the credentials and lists the --network")
	fs.StringVar(&f.cdpKeyID, "cdp-api-key-id", "", "id of the CDP API key that signs each call to Coinbase's facilitator (default: $CDP_API_KEY_ID; the secret comes from $CDP_API_KEY_SECRET)")
	fs.StringVar(&f.cdpKeyFile, "cdp-api-key-file", "", "the CDP API key file as the CDP portal downloads it (JSON with \"id\" and \"privateKey\"), instead of $CDP_API_KEY_ID and $CDP_API_KEY_SECRET")
}

// facilitatorAuth builds the facilitator's credentials: the CDP API key
// (--cdp-api-key-file, or --cdp-api-key-id or $CDP_API_KEY_ID with
// $CDP_API_KEY_SECRET) and the --facilitator-header headers. payOn is
// whether payments are on: credentials given by flag with payments off are
// a mistake; the variables alone are then ignored. No error quotes a secret.
func (f *paymentFlags) facilitatorAuth(payOn bool) (payment.Authorizer, error) {
	getenv := f.getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if !payOn {
		switch {
		case f.cdpKeyFile != "" || f.cdpKeyID != "":
			return nil, errors.New("a CDP API key flag is set but no --pay-to-evm or --pay-to-solana: payment would stay off")
		case len(f.facilitatorHeaders) > 0:
			return nil, errors.New("--facilitator-header is set but no --pay-to-evm or --pay-to-solana: payment would stay off")
		}
		return nil, nil
	}
	var auth payment.Authorizers
	headers, err := payment.ParseStaticHeaders(f.facilitatorHeaders, getenv)
	if err != nil {
		return nil, err
	}
	if len(f.facilitatorHeaders) > 0 {
		auth = append(auth, headers)
	}
	cdp, err := f.cdpKey(getenv)
	if err != nil {
		return nil, err
	}
	if cdp != nil {
		if headers.Has("Authorization") {
			return nil, errors.New("--facilitator-header Authorization and a CDP API key both set the Authorization header: use one")
		}
		auth = append(auth, cdp)
	}
	if len(auth) == 0 {
		return nil, nil
	}
	return auth, nil
}

// cdpKey is the CDP API key the flags and variables give, or nil.
func (f *paymentFlags) cdpKey(getenv func(string) string) (*payment.CDPAuth, error) {
	id, secret := f.cdpKeyID, ""
	if f.cdpKeyFile != "" {
		if id != "" {
			return nil, errors.New("--cdp-api-key-file and --cdp-api-key-id both name the CDP API key: use one")
		}
		data, err := os.ReadFile(f.cdpKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--cdp-api-key-file: %w", err)
		}
		if id, secret, err = payment.ParseCDPKeyFile(data); err != nil {
			return nil, fmt.Errorf("--cdp-api-key-file %s: %w", f.cdpKeyFile, err)
		}
	} else {
		if id == "" {
			id = getenv("CDP_API_KEY_ID")
		}
		secret = getenv("CDP_API_KEY_SECRET")
	}
	switch {
	case id == "" && secret == "":
		return nil, nil
	case id == "":
		return nil, errors.New("CDP_API_KEY_SECRET is set but not the key's id: set CDP_API_KEY_ID or --cdp-api-key-id")
	case secret == "":
		return nil, errors.New("a CDP API key id is set but not its secret: set CDP_API_KEY_SECRET or use --cdp-api-key-file")
	}
	key, err := payment.NewCDPAuth(id, secret, nil)
	if err != nil {
		return nil, fmt.Errorf("the CDP API key (CDP_API_KEY_ID/CDP_API_KEY_SECRET or --cdp-api-key-file): %w", err)
	}
	return key, nil
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
	auth, err := f.facilitatorAuth(f.payToEVM != "" || f.payToSolana != "")
	if err != nil {
		return payment.Config{}, err
	}
	return payment.Config{
		FreePerDay: free, PayToEVM: f.payToEVM, PayToSolana: f.payToSolana, SolanaFeePayer: f.solanaFeePayer,
		FacilitatorURL: f.facilitator, FacilitatorTimeout: f.facilitatorTimeout, FacilitatorAuth: auth,
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
	// A facilitator that redirects gets no request, so no credential, at
	// another address: its 3xx is an answer without a valid x402 reply.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	g, err := payment.NewGate(cfg, st, nil, client)
	if err != nil {
		return nil, err
	}
	if g.PaymentOn() {
		log.Info("payments on (x402 v2)", "network", cfg.Network, "networks", g.Networks(), "price_verify", cfg.PriceVerify+" USDC",
			"price_score", cfg.PriceScore+" USDC", "facilitator", cfg.FacilitatorURL, "facilitator_auth", describeAuth(cfg.FacilitatorAuth), "free_per_day", f.freePerDay)
	} else {
		log.Info("payments off: past the free allowance clients get rate_limited", "free_per_day", f.freePerDay)
	}
	return g, nil
}

// describeAuth names the facilitator credentials for the log: the CDP key's
// id and algorithm, the header names; never a secret.
func describeAuth(a payment.Authorizer) string {
	list, _ := a.(payment.Authorizers)
	if len(list) == 0 {
		return "none"
	}
	parts := make([]string, len(list))
	for i, x := range list {
		parts[i] = fmt.Sprint(x) // CDPAuth and StaticHeaders print no secret
	}
	return strings.Join(parts, "; ")
}

// checkFacilitator asks the facilitator's GET /supported once before the
// server listens (unless --facilitator-check=false): a facilitator that
// cannot be reached, refuses the credentials or does not take the
// configured network stops the start with a message saying what to fix.
func (f *paymentFlags) checkFacilitator(ctx context.Context, g *payment.Gate, log *slog.Logger) error {
	if !g.PaymentOn() {
		return nil
	}
	if !f.facilitatorCheck {
		log.Warn("the facilitator was not checked at start (--facilitator-check=false): paid calls get 503 facilitator_unavailable while it is down")
		return nil
	}
	if err := g.CheckFacilitator(ctx); err != nil {
		return fmt.Errorf("payments cannot start: %w", err)
	}
	log.Info("facilitator checked: it answers, accepts the credentials and takes payments on every network", "networks", g.Networks())
	return nil
}
