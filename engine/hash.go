package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Canonicalizer returns the RFC 8785 canonical form of JSON bytes. The
// caller injects it (signing.Canonicalize) so that engine stays free of the
// signing package.
type Canonicalizer func([]byte) ([]byte, error)

// Hasher returns the lowercase hex SHA-256 of canonical bytes.
type Hasher func([]byte) string

// Hashes are the four hashes of SPEC §5.
type Hashes struct {
	Output  string // submitted_output
	Schema  string // expected_schema
	Rules   string // {"bounds": as sent, "rules": as sent}
	Request string // the request as parsed, defaults filled
}

var jsonNull = []byte("null")

// Hashes computes the request's hashes, canonicalizing each part once.
func (r *Request) Hashes(canon Canonicalizer, hash Hasher) (Hashes, error) {
	part := func(name string) ([]byte, error) {
		raw, ok := r.raw[name]
		if !ok {
			return jsonNull, nil
		}
		c, err := canon(raw)
		if err != nil {
			return nil, fmt.Errorf("canonicalizing %s: %w", name, err)
		}
		return c, nil
	}
	output, err := part("submitted_output")
	if err != nil {
		return Hashes{}, err
	}
	schemaBytes, err := part("expected_schema")
	if err != nil {
		return Hashes{}, err
	}
	boundsSent, err := part("bounds")
	if err != nil {
		return Hashes{}, err
	}
	rulesSent, err := part("rules")
	if err != nil {
		return Hashes{}, err
	}
	var rulesDoc bytes.Buffer
	rulesDoc.WriteString(`{"bounds":`)
	rulesDoc.Write(boundsSent)
	rulesDoc.WriteString(`,"rules":`)
	rulesDoc.Write(rulesSent)
	rulesDoc.WriteString(`}`)

	requestDoc, err := r.requestDocument(canon, schemaBytes, output)
	if err != nil {
		return Hashes{}, err
	}
	return Hashes{
		Output:  hash(output),
		Schema:  hash(schemaBytes),
		Rules:   hash(rulesDoc.Bytes()),
		Request: hash(requestDoc),
	}, nil
}

// requestDocument builds the canonical request of request_hash: eight keys,
// every default filled in. The top-level keys are fixed ASCII names, so the
// canonical document is assembled in their sorted order from canonical parts
// and the large parts are not canonicalized a second time.
func (r *Request) requestDocument(canon Canonicalizer, schemaBytes, output []byte) ([]byte, error) {
	small := func(v any) ([]byte, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return canon(b)
	}
	agent := jsonNull
	if r.AgentID != nil {
		var err error
		if agent, err = small(*r.AgentID); err != nil {
			return nil, fmt.Errorf("canonicalizing agent_id: %w", err)
		}
	}
	task, err := small(r.TaskID)
	if err != nil {
		return nil, fmt.Errorf("canonicalizing task_id: %w", err)
	}
	bounds := jsonNull
	if len(r.Bounds) > 0 {
		filled := make(map[string]any, len(r.Bounds))
		for _, b := range r.Bounds {
			filled[b.Key] = map[string]any{
				"min":        b.decoded["min"],
				"max":        b.decoded["max"],
				"if_present": orFalse(b.decoded["if_present"]),
			}
		}
		if bounds, err = small(filled); err != nil {
			return nil, fmt.Errorf("canonicalizing bounds: %w", err)
		}
	}
	rules := jsonNull
	if len(r.Rules) > 0 {
		filled := make([]map[string]any, len(r.Rules))
		for i, rule := range r.Rules {
			m := make(map[string]any, len(ruleFields))
			for _, name := range ruleFields {
				m[name] = rule.decoded[name]
			}
			if _, sent := rule.decoded["tolerance"]; !sent {
				m["tolerance"] = json.RawMessage(defaultToleranceJSON)
			}
			m["if_present"] = orFalse(rule.decoded["if_present"])
			filled[i] = m
		}
		if rules, err = small(filled); err != nil {
			return nil, fmt.Errorf("canonicalizing rules: %w", err)
		}
	}
	var doc bytes.Buffer
	doc.Grow(len(schemaBytes) + len(output) + len(bounds) + len(rules) + 256)
	for _, member := range []struct {
		name  string
		value []byte
	}{
		{"agent_id", agent},
		{"bounds", bounds},
		{"enforce_rules", boolJSON(r.EnforceRules)},
		{"expected_schema", schemaBytes},
		{"rules", rules},
		{"strict_content_check", boolJSON(r.StrictContentCheck)},
		{"submitted_output", output},
		{"task_id", task},
	} {
		if doc.Len() == 0 {
			doc.WriteByte('{')
		} else {
			doc.WriteByte(',')
		}
		doc.WriteString(`"` + member.name + `":`)
		doc.Write(member.value)
	}
	doc.WriteByte('}')
	return doc.Bytes(), nil
}

func orFalse(v any) any {
	if v == nil {
		return false
	}
	return v
}

func boolJSON(b bool) []byte {
	if b {
		return []byte("true")
	}
	return []byte("false")
}
