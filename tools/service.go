// Package tools is the service core behind every transport: the verifier's
// tools — verify_schema, get_verification_record and verify_receipt — as
// typed cores, with the one verification chain ([Service.VerifyCall]:
// decode, admit, verify, sign, store, settle), the limiter, the metrics,
// the error shape and the transparency log's checks.
//
// The transports are adapters over it: package tools/mcpserver (the MCP
// server, over stdio and streamable HTTP) and package tools/rest (the REST
// routes, documents and pages, which mount MCP at /mcp); the CLI calls it
// directly. A core decodes nothing of its transport: it takes bytes or
// typed input and returns the signed answer or an *Error in the one shape of
// SPEC §6.
package tools

import (
	"log/slog"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// DefaultPublicURL is what the HTTP documents (agent card, OpenAPI,
// llms.txt, payment resources) advertise when no public URL is set. The
// server always sets one in HTTP mode; answers never fall back to it (see
// verifyBlock).
const DefaultPublicURL = "http://127.0.0.1:8080"

// ServiceName names the service in answers' verify block, in the words
// of the hosted service (SPEC §5): clients that check it read the same.
const ServiceName = "Agent Output Verifier"

// Service is the shared core behind every transport.
type Service struct {
	Engine *engine.Verifier
	Keys   *signing.KeyStore
	// LogKey signs the transparency log's checkpoints; set by WithLog (nil:
	// no log served).
	LogKey *signing.LogKey
	Store  store.Store // nil for the CLI, which never opens the database
	// StoreErr is why a server has no Store (nil when it has one, and for
	// the CLI): its cause and its fix, which every answer that depends on
	// the store repeats.
	StoreErr error
	Version  string
	// PublicURL is the base URL that answers and documents advertise. Empty
	// (stdio and the CLI): answers carry the signing key itself instead.
	PublicURL string
	Now       func() time.Time
	Log       *slog.Logger
	// Limiter bounds concurrent verifications; excess ones get 503
	// unavailable (nil: no bound). See [NewLimiter].
	Limiter *Limiter
	// Payment is HTTP mode's free allowance and x402 gate, applied to the
	// chargeable MCP tools (REST routes get it through HTTPOptions.Gate).
	// Nil — stdio and the CLI — serves every call free.
	Payment *payment.Gate
	// Metrics counts requests, verifications and payment outcomes (nil:
	// none). See [Service.WithMetrics].
	Metrics *Metrics

	published publishedKeys // the keys the card publishes: see PublishedKeys
}

// CurrentTime is s.Now(), or the wall clock when Now is nil.
func (s *Service) CurrentTime() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// BaseURL is the base URL that HTTP documents advertise: PublicURL, or
// DefaultPublicURL when none is set.
func (s *Service) BaseURL() string {
	if s.PublicURL != "" {
		return s.PublicURL
	}
	return DefaultPublicURL
}

// verifyBlock is the verify block of answers signed by signer (SPEC §5):
// with a public URL, where its key is published; without one (stdio, the
// CLI: no one serves a card), the public key itself, so the receipt can be
// checked with no server.
func (s *Service) verifyBlock(signer *signing.Signer) engine.VerifyBlock {
	b := engine.VerifyBlock{
		KeyVersion:       signer.KeyVersion(),
		Canonicalization: engine.Canonicalization,
		HashAlgorithm:    engine.HashAlgorithm,
		Service:          ServiceName,
	}
	if s.PublicURL == "" {
		b.PublicKey = signer.PublicKey().PublicKey
		return b
	}
	b.PublicKeyURL = s.PublicURL + "/.well-known/agent-card.json"
	b.MCP = s.PublicURL + "/mcp"
	return b
}

// Logger is s.Log, or slog.Default() when Log is nil.
func (s *Service) Logger() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
