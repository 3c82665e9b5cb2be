package tools

import (
	"encoding/json"

	"github.com/verifier-dev/verifier/signing"
)

// AgentCard is the A2A 1.0 agent card of the service, published at
// /.well-known/agent-card.json (and the older /.well-known/agent.json).
type AgentCard struct {
	Name                string           `json:"name"`
	Description         string           `json:"description"`
	SupportedInterfaces []AgentInterface `json:"supportedInterfaces"`
	Version             string           `json:"version"`
	DocumentationURL    string           `json:"documentationUrl"`
	Capabilities        AgentCaps        `json:"capabilities"`
	DefaultInputModes   []string         `json:"defaultInputModes"`
	DefaultOutputModes  []string         `json:"defaultOutputModes"`
	Skills              []AgentSkill     `json:"skills"`
}

// AgentInterface is one way to reach the service. The bindings are not A2A
// ones: "MCP" is MCP streamable HTTP, "REST" the JSON routes of /openapi.json.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
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
