package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/verifier-dev/verifier/internal/ijson"
)

// The top-level members of a request, by their index in topLevelFields.
const (
	fieldTaskID = iota
	fieldAgentID
	fieldSchema
	fieldOutput
	fieldStrict
	fieldBounds
	fieldRules
	fieldEnforce
	fieldDetail
	numFields
)

var topLevelFields = []string{
	fieldTaskID: "task_id", fieldAgentID: "agent_id", fieldSchema: "expected_schema", fieldOutput: "submitted_output",
	fieldStrict: "strict_content_check", fieldBounds: "bounds", fieldRules: "rules", fieldEnforce: "enforce_rules", fieldDetail: "detail",
}

// requestMembers are a request's top-level members as sent, by index in
// topLevelFields; nil for a member not sent (a value sent is never empty).
type requestMembers [numFields][]byte

// decodedMembers are a request's top-level members decoded, by index in
// topLevelFields. has is false for a member not sent, or not decoded
// because it is malformed; a member that is only checked (the fast path's
// expected_schema, bounds and rules) has a nil value.
type decodedMembers struct {
	value [numFields]any
	has   [numFields]bool
}

func (d *decodedMembers) get(i int) (any, bool) { return d.value[i], d.has[i] }

func (d *decodedMembers) set(i int, v any) { d.value[i], d.has[i] = v, true }

func (d *decodedMembers) drop(i int) { d.value[i], d.has[i] = nil, false }

// decodeMembersFast is DecodeRequest's path for a well-formed request: one
// pass over the body (ijson.DecodeMembers) instead of splitting it with
// jsontext and then decoding every member again. It gives up on anything
// unusual (malformed JSON, a duplicate name, invalid UTF-8, a number outside
// I-JSON, too deep, an unknown field), and DecodeRequest then takes the
// careful path, which names every problem. When it succeeds, that path would
// have found nothing and produced the same members and values.
func decodeMembersFast(body []byte, opts *ijson.Options, raw *requestMembers, decoded *decodedMembers) bool {
	// More members than there are fields means an unknown one (names are
	// unique): give up at once rather than after reading them all.
	fastOpts := *opts
	fastOpts.MaxMembers = numFields
	// The request outlives the caller's buffer: one copy serves every
	// member, and one copy as a string every string and number of the
	// decoded members (substrings of it cost no allocation).
	var room [numFields]ijson.Member
	list, ok := ijson.DecodeMembers(room[:0], bytes.Clone(body), string(body), &fastOpts, "expected_schema", "bounds", "rules")
	if !ok {
		return false
	}
	for _, m := range list {
		i := slices.Index(topLevelFields, m.Name)
		if i < 0 {
			return false
		}
		raw[i] = m.Raw
		decoded.set(i, m.Value)
	}
	return true
}

// decodeMembers decodes each known member of a split request, recording a
// problem for every unknown or malformed one. Unknown members are named in
// the order of their sorted names, each by its position in that order when
// its name is not plain.
func decodeMembers(split *splitBody, opts *ijson.Options, p *problems) decodedMembers {
	var decoded decodedMembers
	names := split.names
	slices.Sort(names)
	for i, name := range names {
		field := slices.Index(topLevelFields, name)
		if field < 0 {
			if p.skip() {
				continue
			}
			p.add(memberName("", name, i), "is not a known field",
				"Remove it; the fields are: task_id, agent_id, expected_schema, submitted_output, strict_content_check, bounds, rules, enforce_rules, detail.")
			continue
		}
		val, err := ijson.Decode(split.raw[field], opts)
		if err != nil {
			var ie *ijson.Error
			switch {
			case errors.As(err, &ie) && ie.Kind == ijson.ErrDepth:
				p.add(name, depthProblem(ie.Limit), ie.Fix())
			case errors.As(err, &ie):
				p.add(name, "is not I-JSON: "+ie.Kind.Error(), ie.Fix())
			default:
				p.add(name, "is not valid JSON", "Send well-formed JSON.")
			}
			continue
		}
		decoded.set(field, val)
	}
	return decoded
}

// depthProblem is the problem of a value nested past limit levels.
func depthProblem(limit int) string {
	return fmt.Sprintf("%s: the limit is %d levels", ijson.ErrDepth, limit)
}

// splitBody is a request body split into its top-level members: the known
// members' values as sent (copied), and every member's name.
type splitBody struct {
	raw   requestMembers
	names []string // in the body's order
}

// splitObject reads a JSON object's members as raw values without decoding
// them, rejecting duplicate names and invalid UTF-8 as it goes; a failure
// names the field at fault. Only the values of known members are kept.
// maxDepth is the nesting limit of a member's value: one nested past it is
// reported as such, not as invalid JSON (jsontext gives up, with a syntax
// error, only far deeper).
func splitObject(body []byte, maxDepth int) (*splitBody, *syntaxError) {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, bodyError(classify(err))
	}
	if tok.Kind() != '{' {
		if ijson.Deeper(body, maxDepth+1) {
			return nil, bodyError("must be a JSON object (and it " + depthProblem(maxDepth+1) + ")")
		}
		return nil, bodyError("must be a JSON object")
	}
	split := &splitBody{}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, bodyError(classify(err))
		}
		key := name.String()
		start := dec.InputOffset()
		val, err := dec.ReadValue()
		if err != nil {
			field := memberName("", key, len(split.names))
			if ijson.Deeper(body[start:], maxDepth) {
				depth := &ijson.Error{Kind: ijson.ErrDepth, Offset: start, Limit: maxDepth}
				return nil, &syntaxError{field: field, problem: depthProblem(maxDepth), fix: depth.Fix()}
			}
			return nil, &syntaxError{field: field, problem: classify(err), fix: bodyFix}
		}
		if i := slices.Index(topLevelFields, key); i >= 0 {
			split.raw[i] = bytes.Clone(val)
		}
		split.names = append(split.names, key)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, bodyError(classify(err))
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, bodyError("has data after the JSON object")
	}
	return split, nil
}

// classify describes a syntax error without quoting the input, as a
// predicate of the field it is in ("is not valid JSON …").
func classify(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "is empty or truncated JSON"
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		switch {
		case errors.Is(se.Err, jsontext.ErrDuplicateName):
			return "has a duplicate object key (I-JSON forbids it)"
		case bytes.Contains([]byte(se.Err.Error()), []byte("UTF-8")):
			return fmt.Sprintf("has invalid UTF-8 at byte %d", se.ByteOffset)
		}
		return fmt.Sprintf("is not valid JSON (syntax error at byte %d)", se.ByteOffset)
	}
	return "is not valid JSON"
}

// bodyFix is the fix of a body that does not split into members.
const bodyFix = "Send one JSON object (I-JSON, RFC 7493) with the fields of the verification request."

// syntaxError is a body that does not split into members: the field at
// fault ("body", or the member whose value is malformed), the problem, a
// predicate of that field, and its fix, as a FieldProblem reads them.
type syntaxError struct {
	field, problem, fix string
}

func bodyError(problem string) *syntaxError {
	return &syntaxError{field: "body", problem: problem, fix: bodyFix}
}

func (e *syntaxError) Error() string { return e.field + " " + e.problem }
