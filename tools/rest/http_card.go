package rest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
)

// NewAgentCard builds the service's agent card, advertising svc.PublicURL.
func NewAgentCard(svc *tools.Service) (*tools.AgentCard, error) {
	vectors, err := RequestHashVectors()
	if err != nil {
		return nil, err
	}
	base := svc.BaseURL()
	modes := []string{"application/json"}
	card := &tools.AgentCard{
		Name: "Agent Output Verifier",
		Description: "Checks an AI agent's structured output (an invoice, a deliverable, any JSON) against the buyer's JSON Schema " +
			"and cross-field rules before anyone pays for it. Answers pass/fail, the share of checks passed and repair hints, " +
			"with an Ed25519-signed receipt over RFC 8785 JSON that anyone can verify offline; keeps each agent's reputation and trust score.",
		Version:          svc.Version,
		DocumentationURL: base + "/docs",
		Capabilities: tools.AgentCaps{Extensions: []tools.AttestationExtension{{
			URI: signing.AttestationExtensionURI, Description: signing.AttestationExtensionDescription,
			Params: tools.AttestationParams{
				PublicKeys:       svc.Keys.PublicKeys(),
				Algorithm:        "Ed25519",
				Canonicalization: engine.Canonicalization,
				HashAlgorithm:    engine.HashAlgorithm,
				Contexts: map[string]string{
					"verify": signing.ContextVerify, "trustScore": signing.ContextTrustScore,
				},
				RequestHashTestVectors: vectors,
				TransparencyLog:        svc.TransparencyLog(),
			},
		}}},
		DefaultInputModes:  modes,
		DefaultOutputModes: modes,
		Skills: []tools.AgentSkill{
			{
				ID: "verify_schema", Name: "Verify structured output",
				Description: "Check submitted_output against expected_schema (JSON Schema 2020-12 or draft-07), bounds and cross-field rules; " +
					"answer pass/fail with ratios, repair hints and a signed receipt. REST: POST /verify/schema (or /verify/deliverable).",
				Tags:        []string{"json-schema", "verification", "receipt", "ed25519", "escrow"},
				Examples:    []string{"Check this invoice JSON against my schema and make sure the line totals add up to the total before I pay."},
				InputModes:  modes,
				OutputModes: modes,
			},
			{
				ID: "get_verification_record", Name: "Agent trust record",
				Description: "A signed record of an agent's verdicts: a 0-100 trust score with its 95% interval, the inputs and formula, and recent verdicts. " +
					"REST: GET /score/{agent_id}.",
				Tags:        []string{"reputation", "trust-score", "receipt"},
				Examples:    []string{"How reliable is seller-7's output?"},
				InputModes:  modes,
				OutputModes: modes,
			},
			{
				ID: "verify_receipt", Name: "Verify a receipt",
				Description: "Check a receipt's Ed25519 signature against the published keys and, given the original request, recompute its hashes and verdict.",
				Tags:        []string{"receipt", "ed25519", "audit"},
				Examples:    []string{"Is this receipt the seller attached genuine, and is it for this output?"},
				InputModes:  modes,
				OutputModes: modes,
			},
		},
	}
	card.SetInterfaces(
		tools.AgentInterface{URL: base + "/mcp", ProtocolBinding: tools.BindingMCP, ProtocolVersion: tools.A2AV10},
		tools.AgentInterface{URL: base, ProtocolBinding: tools.BindingREST, ProtocolVersion: tools.A2AV10},
	)
	return card, nil
}

// RequestHashVectors returns the three request-hash vectors of SPEC §5 (the
// copies embedded in the binary).
func RequestHashVectors() ([]tools.RequestHashVector, error) {
	names, err := fs.Glob(docsFS, "docs/vectors/*.request.json")
	if err != nil {
		return nil, fmt.Errorf("listing request-hash vectors: %w", err)
	}
	var out []tools.RequestHashVector
	for _, name := range names {
		stem := strings.TrimSuffix(name, ".request.json")
		req, err1 := fs.ReadFile(docsFS, name)
		canonical, err2 := fs.ReadFile(docsFS, stem+".canonical.json")
		hash, err3 := fs.ReadFile(docsFS, stem+".sha256")
		if err := firstError(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("reading request-hash vector %s: %w", stem, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, req); err != nil {
			return nil, fmt.Errorf("reading request-hash vector %s: %w", stem, err)
		}
		out = append(out, tools.RequestHashVector{
			Name:        strings.TrimPrefix(stem, "docs/vectors/"),
			Request:     compact.Bytes(),
			Canonical:   string(bytes.TrimRight(canonical, "\n")),
			RequestHash: strings.TrimSpace(string(hash)),
		})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no request-hash vector is embedded")
	}
	return out, nil
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// buildCard renders the card once: the keys cannot change while the process
// runs (a rotation takes effect on restart).
func (h *HTTPHandler) buildCard() (staticDoc, error) {
	card, err := NewAgentCard(h.svc)
	if err != nil {
		return staticDoc{}, err
	}
	body, err := ijson.Marshal(card)
	if err != nil {
		return staticDoc{}, fmt.Errorf("encoding agent card: %w", err)
	}
	return newStaticDoc("agent-card.json", "application/json", "public, max-age=300", body), nil
}

// staticDoc is a document fixed for the life of the process, served with an
// ETag (and 304s) by http.ServeContent.
type staticDoc struct {
	name, contentType, cacheControl, etag string
	body                                  []byte
	headers                               map[string]string
}

func newStaticDoc(name, contentType, cacheControl string, body []byte) staticDoc {
	sum := sha256.Sum256(body)
	return staticDoc{
		name: name, contentType: contentType, cacheControl: cacheControl,
		etag: `"` + hex.EncodeToString(sum[:16]) + `"`, body: body,
	}
}

func (d staticDoc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", d.contentType)
	h.Set("Cache-Control", d.cacheControl)
	h.Set("ETag", d.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	for k, v := range d.headers {
		h.Set(k, v)
	}
	http.ServeContent(w, r, d.name, time.Time{}, bytes.NewReader(d.body))
}
