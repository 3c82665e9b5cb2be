package engine

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/verifier-dev/verifier/internal/bufpool"
	"github.com/verifier-dev/verifier/internal/ijson"
)

// Hasher returns the lowercase hex SHA-256 of canonical bytes
// (signing.HashCanonical). It must not keep them: they may be in a buffer
// that is used again.
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
// What depends only on expected_schema, or only on bounds and rules, is
// remembered by their bytes as sent (bounded caches, below): a client that
// sends the same schema and rules with every request has them
// canonicalized and hashed once. Equal bytes have one canonical form, so
// the hashes are the same either way. The parts that are not remembered are
// canonicalized straight into the request document, in a reused buffer.
func (v *Verifier) Hashes(r *Request, hash Hasher) (Hashes, error) {
	buf := requestDocuments.Get()
	defer requestDocuments.Put(buf)
	// submitted_output's canonical form is written first, hashed where it
	// is, and copied into the request document, which follows it in the
	// buffer. The parts are canonicalized in the order they always were, so
	// a failure names the same part.
	doc := slices.Grow((*buf)[:0], 2*len(r.raw[fieldOutput])+len(r.raw[fieldSchema])+256)
	doc, err := r.appendCanonicalPart(doc, fieldOutput)
	*buf = doc
	if err != nil {
		return Hashes{}, err
	}
	output := len(doc)
	schemaText, err := r.canonicalSchema(hash, v.schemaText)
	if err != nil {
		return Hashes{}, err
	}
	checks, err := r.canonicalChecks(hash, v.checksText)
	if err != nil {
		return Hashes{}, err
	}
	doc = r.appendRequestDocument(doc, output, schemaText.canonical, checks)
	*buf = doc
	return Hashes{
		Output:  hash(doc[:output]),
		Schema:  schemaText.hash,
		Rules:   checks.rulesHash,
		Request: hash(doc[output:]),
	}, nil
}

// requestDocuments holds spare buffers for request documents, which live
// only until they are hashed. It holds nothing that reaches a result.
var requestDocuments = bufpool.New(256 << 10)

// What Verifier.Hashes and DecodeRequest remember is bounded twice: an entry
// is made only for a schema, or bounds and rules together, of at most
// maxRemembered bytes as sent, and each cache drops its least recently used
// entries beyond rememberBudget bytes (the bytes as sent and the canonical
// forms; a decoded entry is reckoned at four times its bytes as sent).
const (
	maxRemembered  = 1 << 20
	rememberBudget = 32 << 20
)

// appendRememberKey appends to dst the key under which what bounds and
// rules give is remembered: the two members as sent. It appends nothing
// when they are too large to be remembered, so that an empty dst stays
// empty: a key under which no cache stores anything.
func appendRememberKey(dst, rawBounds, rawRules []byte) []byte {
	if len(rawBounds)+len(rawRules) > maxRemembered {
		return dst
	}
	key := binary.BigEndian.AppendUint32(dst, uint32(len(rawBounds)))
	return append(append(key, rawBounds...), rawRules...)
}

// keyRoom is room on the stack for the remember key of typical bounds and
// rules.
type keyRoom [512]byte

// canonicalSchema is an expected_schema's canonical form and its hash.
type canonicalSchema struct {
	canonical []byte // shared: never modified
	hash      string
}

// canonicalChecks is what bounds and rules give the hashes: rules_hash, and
// the canonical bounds and rules of request_hash, defaults filled.
type canonicalChecks struct {
	rulesHash     string
	bounds, rules []byte // shared: never modified
}

// appendCanonicalPart appends the canonical form of the top-level member
// field as sent to dst, null when it was not sent.
func (r *Request) appendCanonicalPart(dst []byte, field int) ([]byte, error) {
	raw := r.raw[field]
	if raw == nil {
		return append(dst, jsonNull...), nil
	}
	c, err := ijson.AppendCanonical(dst, raw, 0)
	if err != nil {
		return dst, fmt.Errorf("canonicalizing %s: canonicalizing JSON: %w", topLevelFields[field], err)
	}
	return c, nil
}

// canonicalSchema is expected_schema's canonical form and hash, from
// remembered when it holds them.
func (r *Request) canonicalSchema(hash Hasher, remembered *lru[canonicalSchema]) (canonicalSchema, error) {
	raw := r.raw[fieldSchema]
	if len(raw) > maxRemembered {
		remembered = nil
	}
	if c, ok := lookup(remembered, raw); ok {
		return c, nil
	}
	canonical, err := r.appendCanonicalPart(nil, fieldSchema)
	if err != nil {
		return canonicalSchema{}, err
	}
	c := canonicalSchema{canonical: canonical, hash: hash(canonical)}
	remembered.put(string(raw), c, len(raw)+len(canonical))
	return c, nil
}

// canonicalChecks is what bounds and rules give the hashes, from remembered
// when it holds them, keyed by the two members as sent.
func (r *Request) canonicalChecks(hash Hasher, remembered *lru[canonicalChecks]) (canonicalChecks, error) {
	var room keyRoom
	key := appendRememberKey(room[:0], r.raw[fieldBounds], r.raw[fieldRules])
	if c, ok := lookup(remembered, key); ok {
		return c, nil
	}
	doc := append(make([]byte, 0, len(r.raw[fieldBounds])+len(r.raw[fieldRules])+32), `{"bounds":`...)
	doc, err := r.appendCanonicalPart(doc, fieldBounds)
	if err != nil {
		return canonicalChecks{}, err
	}
	doc = append(doc, `,"rules":`...)
	if doc, err = r.appendCanonicalPart(doc, fieldRules); err != nil {
		return canonicalChecks{}, err
	}
	c := canonicalChecks{rulesHash: hash(append(doc, '}')), bounds: jsonNull, rules: jsonNull}
	if len(r.Bounds) > 0 {
		if c.bounds, err = canonFilled(r.filledBounds()); err != nil {
			return canonicalChecks{}, fmt.Errorf("canonicalizing bounds: %w", err)
		}
	}
	if len(r.Rules) > 0 {
		if c.rules, err = canonFilled(r.filledRules()); err != nil {
			return canonicalChecks{}, fmt.Errorf("canonicalizing rules: %w", err)
		}
	}
	remembered.put(string(key), c, len(key)+len(c.bounds)+len(c.rules))
	return c, nil
}

// appendRequestDocument appends to doc the canonical request of
// request_hash: eight keys, every default filled in. The top-level keys are
// fixed ASCII names, so the canonical document is assembled in their sorted
// order from canonical parts and the large parts are not canonicalized a
// second time. submitted_output's canonical form is doc[:output]; task_id
// and agent_id (null when null or not sent) are the strings decoded.
func (r *Request) appendRequestDocument(doc []byte, output int, schemaBytes []byte, checks canonicalChecks) []byte {
	doc = slices.Grow(doc, output+len(schemaBytes)+len(checks.bounds)+len(checks.rules)+256)
	doc = append(doc, `{"agent_id":`...)
	if r.AgentID == nil {
		doc = append(doc, jsonNull...)
	} else {
		doc = ijson.AppendCanonicalString(doc, *r.AgentID)
	}
	doc = append(doc, `,"bounds":`...)
	doc = append(doc, checks.bounds...)
	doc = append(doc, `,"enforce_rules":`...)
	doc = strconv.AppendBool(doc, r.EnforceRules)
	doc = append(doc, `,"expected_schema":`...)
	doc = append(doc, schemaBytes...)
	doc = append(doc, `,"rules":`...)
	doc = append(doc, checks.rules...)
	doc = append(doc, `,"strict_content_check":`...)
	doc = strconv.AppendBool(doc, r.StrictContentCheck)
	doc = append(doc, `,"submitted_output":`...)
	doc = append(doc, doc[:output]...)
	doc = append(doc, `,"task_id":`...)
	doc = ijson.AppendCanonicalString(doc, r.TaskID)
	return append(doc, '}')
}

// canonFilled canonicalizes one filled part of the request document
// (bounds or rules, defaults filled in), built from decoded request values.
func canonFilled(filled any) ([]byte, error) {
	text, err := json.Marshal(filled)
	if err != nil {
		return nil, err
	}
	canonical, err := ijson.AppendCanonical(nil, text, 0)
	if err != nil {
		return nil, fmt.Errorf("canonicalizing JSON: %w", err)
	}
	return canonical, nil
}

// filledBounds is bounds as request_hash takes them: every bound with min,
// max and if_present, defaults filled in.
func (r *Request) filledBounds() map[string]filledBound {
	filled := make(map[string]filledBound, len(r.Bounds))
	for _, b := range r.Bounds {
		filled[b.Key] = filledBound{IfPresent: orFalse(b.decoded["if_present"]), Max: b.decoded["max"], Min: b.decoded["min"]}
	}
	return filled
}

// filledBound and filledRule are a bound and a rule as request_hash takes
// them. Structs, not maps: encoding/json writes them several times faster.
type filledBound struct {
	IfPresent any `json:"if_present"`
	Max       any `json:"max"`
	Min       any `json:"min"`
}

type filledRule struct {
	Equals      any `json:"equals"`
	EqualsField any `json:"equals_field"`
	Field       any `json:"field"`
	IfPresent   any `json:"if_present"`
	InField     any `json:"in_field"`
	OtherField  any `json:"other_field"`
	Tolerance   any `json:"tolerance"`
	Type        any `json:"type"`
	Value       any `json:"value"`
	Values      any `json:"values"`
}

// filledRules is rules as request_hash takes them: every rule with all ten
// rule fields, defaults filled in.
func (r *Request) filledRules() []filledRule {
	filled := make([]filledRule, len(r.Rules))
	for i := range r.Rules {
		d := r.Rules[i].decoded
		filled[i] = filledRule{
			Equals: d["equals"], EqualsField: d["equals_field"], Field: d["field"], IfPresent: orFalse(d["if_present"]),
			InField: d["in_field"], OtherField: d["other_field"], Tolerance: d["tolerance"], Type: d["type"],
			Value: d["value"], Values: d["values"],
		}
		if filled[i].Tolerance == nil {
			filled[i].Tolerance = json.RawMessage(defaultToleranceJSON)
		}
	}
	return filled
}

func orFalse(v any) any {
	if v == nil {
		return false
	}
	return v
}
