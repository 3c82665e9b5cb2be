package tools

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// AgentCard is the service's A2A agent card, published at
// /.well-known/agent-card.json (and the older /.well-known/agent.json). It
// is an A2A 1.0 card (supportedInterfaces) that also carries the members
// the A2A 0.3 schema requires (protocolVersion, url, preferredTransport,
// additionalInterfaces), so that clients of either version read it. The
// interfaces are custom bindings, named by URI as A2A 1.0 §5.8 asks: MCP
// streamable HTTP (BindingMCP) and the REST routes of /openapi.json
// (BindingREST). The service serves no A2A JSON-RPC, gRPC or HTTP+JSON
// binding, so an A2A client needs a transport for one of these.
type AgentCard struct {
	Name                string           `json:"name"`
	Description         string           `json:"description"`
	SupportedInterfaces []AgentInterface `json:"supportedInterfaces"`
	// ProtocolVersion is the A2A 0.3 member: the version whose card
	// members url, preferredTransport and additionalInterfaces follow
	// (A2AV03).
	ProtocolVersion string `json:"protocolVersion"`
	// URL and PreferredTransport are A2A 0.3's main interface: the first
	// of SupportedInterfaces.
	URL                string `json:"url"`
	PreferredTransport string `json:"preferredTransport"`
	// AdditionalInterfaces are SupportedInterfaces in A2A 0.3's form.
	AdditionalInterfaces []AgentInterfaceV03 `json:"additionalInterfaces"`
	Version              string              `json:"version"`
	DocumentationURL     string              `json:"documentationUrl"`
	Capabilities         AgentCaps           `json:"capabilities"`
	DefaultInputModes    []string            `json:"defaultInputModes"`
	DefaultOutputModes   []string            `json:"defaultOutputModes"`
	Skills               []AgentSkill        `json:"skills"`
}

// The card's protocol versions and binding URIs.
const (
	// A2AV10 is the A2A version of each supportedInterfaces entry.
	A2AV10 = "1.0"
	// A2AV03 is the card's top-level protocolVersion (A2A 0.3's member).
	A2AV03 = "0.3.0"
	// BindingMCP names MCP's streamable HTTP transport, the one /mcp
	// serves, by the MCP specification's URI for it.
	BindingMCP = "https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http"
	// BindingREST names this service's own JSON routes (described by
	// /openapi.json), in the URN namespace of its attestation extension.
	BindingREST = "urn:json-schema-verifier:binding:rest:v1"
)

// AgentInterface is one way to reach the service (A2A 1.0): URL, the
// binding's URI (BindingMCP, BindingREST) and the A2A version (A2AV10).
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentInterfaceV03 is an AgentInterface in A2A 0.3's form.
type AgentInterfaceV03 struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

// SetInterfaces sets the card's interfaces in both forms: A2A 1.0's
// supportedInterfaces, and A2A 0.3's url and preferredTransport (the first
// interface) and additionalInterfaces (all of them, the first included, as
// the 0.3 schema advises).
func (c *AgentCard) SetInterfaces(interfaces ...AgentInterface) {
	c.SupportedInterfaces = interfaces
	c.ProtocolVersion = A2AV03
	c.AdditionalInterfaces = nil
	for _, in := range interfaces {
		c.AdditionalInterfaces = append(c.AdditionalInterfaces, AgentInterfaceV03{URL: in.URL, Transport: in.ProtocolBinding})
	}
	if len(interfaces) > 0 {
		c.URL, c.PreferredTransport = interfaces[0].URL, interfaces[0].ProtocolBinding
	}
}

// AgentCaps are the card's capabilities: no streaming or push, and the
// attestation extension that publishes the receipt keys.
type AgentCaps struct {
	Streaming         bool                   `json:"streaming"`
	PushNotifications bool                   `json:"pushNotifications"`
	Extensions        []AttestationExtension `json:"extensions"`
}

// AttestationExtension is the capabilities.extensions[] entry that publishes
// every key the service ever signed with and the request-hash test vectors;
// signing.KeysFromAgentCard reads it back.
type AttestationExtension struct {
	URI         string            `json:"uri"`
	Description string            `json:"description"`
	Required    bool              `json:"required"`
	Params      AttestationParams `json:"params"`
}

// AttestationParams are the params of the attestation extension.
type AttestationParams struct {
	PublicKeys             []signing.PublicKey `json:"publicKeys"`
	Algorithm              string              `json:"algorithm"`
	Canonicalization       string              `json:"canonicalization"`
	HashAlgorithm          string              `json:"hashAlgorithm"`
	Contexts               map[string]string   `json:"contexts"`
	RequestHashTestVectors []RequestHashVector `json:"requestHashTestVectors"`
	// TransparencyLog is the log every stored receipt is appended to,
	// when the service keeps one.
	TransparencyLog *TransparencyLogParams `json:"transparencyLog,omitempty"`
}

// TransparencyLogParams publish the transparency log: its origin, the
// key that signs its checkpoints (note verifier key format,
// "<name>+<hash>+<base64>") and where its C2SP tlog-tiles tree is served.
type TransparencyLogParams struct {
	Origin      string `json:"origin"`
	VerifierKey string `json:"verifierKey"`
	URL         string `json:"url"`
}

// RequestHashVector is a request body, its canonical form for request_hash
// (every default filled in, RFC 8785) and that hash, so that a client can
// check its own implementation of SPEC §5.
type RequestHashVector struct {
	Name        string          `json:"name"`
	Request     json.RawMessage `json:"request"`
	Canonical   string          `json:"canonical"`
	RequestHash string          `json:"requestHash"`
}

// AgentSkill is one tool of the service.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples"`
	InputModes  []string `json:"inputModes"`
	OutputModes []string `json:"outputModes"`
}

// TransparencyLog is the card's description of the log, nil without one.
func (s *Service) TransparencyLog() *TransparencyLogParams {
	if s.LogKey == nil {
		return nil
	}
	return &TransparencyLogParams{Origin: s.LogKey.Name(), VerifierKey: s.LogKey.VerifierKey(), URL: s.BaseURL() + "/log"}
}

// publishedKeysTTL is how long the store's key records, once read, are
// published before they are read again: a replica that starts with a new
// signing key is published by the others within this time.
const publishedKeysTTL = 5 * time.Second

// publishedKeysTimeout bounds one read of the store's key records.
const publishedKeysTimeout = 2 * time.Second

// publishedKeys caches the merged key list of [Service.PublishedKeys].
type publishedKeys struct {
	mu   sync.Mutex
	read time.Time // when the store's records were last read
	list []signing.PublicKey
}

// PublishedKeys returns the receipt keys the service publishes (the agent
// card's publicKeys): its own key store's, then every other key its store
// records — keys that signed stored receipts, of this process before a
// migration or rotation, or of another replica — by key version. The
// store's records are read at most every few seconds; when they cannot be
// read, the last list read (or the key store's alone) is published. The
// slice is the caller's.
func (s *Service) PublishedKeys(ctx context.Context) []signing.PublicKey {
	var own []signing.PublicKey
	if s.Keys != nil {
		own = s.Keys.PublicKeys()
	}
	kr, ok := store.KeyRecordsOf(s.Store)
	if s.Store == nil || !ok {
		return own
	}
	p := &s.published
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.list != nil && time.Since(p.read) < publishedKeysTTL {
		return slices.Clone(p.list)
	}
	ctx, cancel := context.WithTimeout(ctx, publishedKeysTimeout)
	defer cancel()
	records, err := kr.SigningKeys(ctx)
	p.read = time.Now()
	if err != nil {
		if !errors.Is(err, store.ErrNotSupported) { // an older owner records none: nothing to say each time
			s.Logger().Warn("reading the signing keys recorded in the store: publishing the last keys read", "err", err)
		}
		if p.list == nil {
			p.list = own
		}
		return slices.Clone(p.list)
	}
	p.list = mergeKeys(own, records)
	return slices.Clone(p.list)
}

// mergeKeys is own followed by each record whose key version own lacks.
func mergeKeys(own []signing.PublicKey, records []store.KeyRecord) []signing.PublicKey {
	out := slices.Clone(own)
	for _, r := range records {
		if slices.ContainsFunc(own, func(k signing.PublicKey) bool { return k.KeyVersion == r.KeyVersion }) {
			continue
		}
		out = append(out, signing.PublicKey{KeyVersion: r.KeyVersion, Algorithm: signing.Algorithm,
			PublicKey: base64.StdEncoding.EncodeToString(r.PublicKey), PublicKeyEncoding: signing.PublicKeyEncoding})
	}
	return out
}

// PublishedKeyResolver is [Service.PublishedKeys] as a KeyResolver: the
// keys a receipt of this service, or of another replica of its store, is
// checked with.
func (s *Service) PublishedKeyResolver(ctx context.Context) signing.KeyResolver {
	keys := signing.Keys{}
	for _, k := range s.PublishedKeys(ctx) {
		if pub, err := base64.StdEncoding.DecodeString(k.PublicKey); err == nil && len(pub) == ed25519.PublicKeySize {
			keys[k.KeyVersion] = pub
		}
	}
	return keys
}
