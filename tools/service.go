// Package tools holds the verifier's tools — verify_schema,
// get_verification_record and verify_receipt — as typed cores that MCP, REST
// and the CLI share, plus the adapters that serve them.
//
// A core decodes nothing of its transport: it takes bytes or typed input and
// returns the signed answer or an *Error in the one shape of SPEC §6.
package tools

import (
	"log/slog"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// DefaultPublicURL is what answers advertise when no public URL is set
// (stdio and the CLI).
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
	LogKey  *signing.LogKey
	Store   store.Store // nil for the CLI, which never opens the database
	Version string
	// PublicURL is the base URL that answers and documents advertise.
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
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) publicURL() string {
	if s.PublicURL != "" {
		return s.PublicURL
	}
	return DefaultPublicURL
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
