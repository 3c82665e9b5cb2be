package rest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
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
				PublicKeys:       svc.PublishedKeys(context.Background()),
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
				ID: contract.VerifySchema, Name: "Verify structured output",
				Description: "Check submitted_output against expected_schema (JSON Schema 2020-12 or draft-07), bounds and cross-field rules; " +
					"answer pass/fail with ratios, repair hints and a signed receipt. REST: POST /verify/schema (or /verify/deliverable).",
				Tags:        []string{"json-schema", "verification", "receipt", "ed25519", "escrow"},
				Examples:    []string{"Check this invoice JSON against my schema and make sure the line totals add up to the total before I pay."},
				InputModes:  modes,
				OutputModes: modes,
			},
			{
				ID: contract.Record, Name: "Agent trust record",
				Description: "A signed record of an agent's verdicts: a 0-100 trust score with its 95% interval, the inputs and formula, and recent verdicts. " +
					"REST: GET /score/{agent_id}.",
				Tags:        []string{"reputation", "trust-score", "receipt"},
				Examples:    []string{"How reliable is seller-7's output?"},
				InputModes:  modes,
				OutputModes: modes,
			},
			{
				ID: contract.VerifyReceipt, Name: "Verify a receipt",
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

// cardDoc serves the agent card. Its keys are the service's published keys
// (tools.Service.PublishedKeys), which grow while the process runs when
// another replica records a new signing key in the store: the card is
// rendered again, with a new ETag, whenever they change.
type cardDoc struct {
	svc  *tools.Service
	mu   sync.Mutex
	keys []signing.PublicKey // the keys of doc
	doc  staticDoc
}

// buildCard renders the card with the keys published now.
func (h *HTTPHandler) buildCard() (*cardDoc, error) {
	d := &cardDoc{svc: h.svc}
	if _, err := d.current(context.Background()); err != nil {
		return nil, err
	}
	return d, nil
}

// current returns the card of the keys published now, rendering it again
// when they changed.
func (d *cardDoc) current(ctx context.Context) (staticDoc, error) {
	keys := d.svc.PublishedKeys(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.doc.body != nil && slices.Equal(keys, d.keys) {
		return d.doc, nil
	}
	card, err := NewAgentCard(d.svc)
	if err != nil {
		return staticDoc{}, err
	}
	body, err := ijson.Marshal(card)
	if err != nil {
		return staticDoc{}, fmt.Errorf("encoding agent card: %w", err)
	}
	d.keys = card.Capabilities.Extensions[0].Params.PublicKeys
	d.doc = newStaticDoc("agent-card.json", "application/json", "public, max-age=300", body)
	return d.doc, nil
}

func (d *cardDoc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	doc, err := d.current(r.Context())
	if err != nil {
		// The card rendered at start cannot fail to render now but for a
		// bug: serve the last one.
		d.mu.Lock()
		doc = d.doc
		d.mu.Unlock()
	}
	doc.ServeHTTP(w, r)
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
