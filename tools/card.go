package tools

import (
	"encoding/json"

	"github.com/verifier-dev/verifier/signing"
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
