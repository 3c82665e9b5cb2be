package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

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
// because it is malformed; a member that is only checked (expected_schema,
// bounds and rules of a well-formed body) has a nil value.
type decodedMembers struct {
	value [numFields]any
	has   [numFields]bool
}

func (d *decodedMembers) get(i int) (any, bool) { return d.value[i], d.has[i] }

func (d *decodedMembers) set(i int, v any) { d.value[i], d.has[i] = v, true }

func (d *decodedMembers) drop(i int) { d.value[i], d.has[i] = nil, false }

// readMembers reads a request body's top-level members: each known one's
// value as sent into raw, and decoded into the result, expected_schema,
// bounds and rules only checked (a nil value) when the body is well-formed.
// It records a problem for every unknown member and every malformed one;
// ok is false when the body does not even split into members (its problem
// recorded).
func readMembers(body []byte, opts *ijson.Options, raw *requestMembers, p *problems) (decoded decodedMembers, ok bool) {
	// The request outlives the caller's buffer: one copy serves every
	// member, and one copy as a string every string and number of the
	// decoded members (substrings of it cost no allocation).
	var room [numFields]ijson.Member
	list, ok := ijson.DecodeMembers(room[:0], bytes.Clone(body), string(body), opts, "expected_schema", "bounds", "rules")
	if !ok {
		// Something is malformed: split the body to find what, and where.
		names, se := splitObject(body, opts.MaxDepth, raw)
		if se != nil {
			p.add(se.field, se.problem, se.fix)
			return decoded, false
		}
		decodeMembers(names, raw, &decoded, opts, p)
		return decoded, true
	}
	unknown := false
	for _, m := range list {
		if i := slices.Index(topLevelFields, m.Name); i >= 0 {
			raw[i] = m.Raw
			decoded.set(i, m.Value)
		} else {
			unknown = true
		}
	}
	if unknown {
		names := make([]string, len(list))
		for i, m := range list {
			names[i] = m.Name
		}
		decodeMembers(names, raw, &decoded, opts, p)
	}
	return decoded, true
}

// decodeMembers decodes each known member of raw that is not decoded yet,
// recording a problem for every unknown or malformed one. names are every
// member's; unknown members are named in the order of the sorted names,
// each by its position in that order when its name is not plain.
func decodeMembers(names []string, raw *requestMembers, decoded *decodedMembers, opts *ijson.Options, p *problems) {
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
		if decoded.has[field] {
			continue
		}
		val, err := ijson.Decode(raw[field], opts)
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
}

// depthProblem is the problem of a value nested past limit levels.
func depthProblem(limit int) string {
	return fmt.Sprintf("%s: the limit is %d levels", ijson.ErrDepth, limit)
}

// splitObject reads a JSON object's members as raw values without decoding
// them (encoding/json's tokens), rejecting what is not I-JSON but for
// numbers and depth, which decodeMembers reports, as it goes; a failure
// names the field at fault (textProblem). It returns every member's name,
// in the body's order, and copies the known members' values into raw.
// maxDepth is the nesting limit of a member's value: one nested past it is
// reported as such, not as invalid JSON (encoding/json gives up, with a
// syntax error, only far deeper).
func splitObject(body []byte, maxDepth int, raw *requestMembers) ([]string, *syntaxError) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return nil, bodyError(textProblem(body, 0, err))
	}
	if tok != json.Delim('{') {
		if ijson.Deeper(body, maxDepth+1) {
			return nil, bodyError("must be a JSON object (and it " + depthProblem(maxDepth+1) + ")")
		}
		return nil, bodyError("must be a JSON object")
	}
	var names []string
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		key, isName := tok.(string)
		switch {
		case err != nil || !isName:
			return nil, bodyError(textProblem(body, 0, err))
		case seen[key]:
			return nil, bodyError(duplicateKey)
		}
		seen[key] = true
		field := memberName("", key, len(names))
		start, colon := valueStart(body, dec.InputOffset())
		if !colon {
			return nil, &syntaxError{field: field, problem: syntaxAt(start), fix: bodyFix}
		}
		var val json.RawMessage
		err = dec.Decode(&val)
		if err != nil && ijson.Deeper(body[start:], maxDepth) {
			depth := &ijson.Error{Kind: ijson.ErrDepth, Offset: start, Limit: maxDepth}
			return nil, &syntaxError{field: field, problem: depthProblem(maxDepth), fix: depth.Fix()}
		}
		text := body[start:]
		if err == nil {
			text = val
		}
		if problem := textProblem(text, start, err); problem != "" {
			return nil, &syntaxError{field: field, problem: problem, fix: bodyFix}
		}
		if i := slices.Index(topLevelFields, key); i >= 0 {
			raw[i] = val
		}
		names = append(names, key)
	}
	if _, err := dec.Token(); err != nil {
		return nil, bodyError(textProblem(body, 0, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bodyError("has data after the JSON object")
	}
	// The values are checked: what is left to find is a name that is not
	// valid UTF-8.
	if problem := textProblem(body, 0, nil); problem != "" {
		return nil, bodyError(problem)
	}
	return names, nil
}

// valueStart is where a member's value starts, after offset, the end of its
// name: past the colon and white space. colon is false when something else
// follows the name; start is then where it is.
func valueStart(body []byte, offset int64) (start int64, colon bool) {
	rest := bytes.TrimLeft(body[offset:], jsonSpace)
	after, colon := bytes.CutPrefix(rest, []byte(":"))
	if !colon && len(rest) > 0 {
		return int64(len(body) - len(rest)), false
	}
	return int64(len(body) - len(bytes.TrimLeft(after, jsonSpace))), true
}

const (
	jsonSpace    = " \t\r\n"
	duplicateKey = "has a duplicate object key (I-JSON forbids it)"
	// splitDepth is deeper than any member depth limit: textProblem looks
	// for every other problem first.
	splitDepth = 10_000
)

// textProblem words what is wrong with text, a body or a member's value (and
// what follows it when syntaxErr, encoding/json's error reading it, is not
// nil), at byte base of the body, as a predicate of the field it is in and
// without quoting the input: the first problem ijson finds in it. "" when
// syntaxErr is nil and that problem, if any, is a number or a depth, which
// decodeMembers reports.
func textProblem(text []byte, base int64, syntaxErr error) string {
	_, err := ijson.Decode(text, &ijson.Options{MaxDepth: splitDepth})
	var ie *ijson.Error
	if !errors.As(err, &ie) {
		if syntaxErr == nil {
			return ""
		}
		return "is not valid JSON"
	}
	at := base + ie.Offset
	escape := ie.Offset < int64(len(text)) && text[ie.Offset] == '\\'
	switch {
	case ie.Kind == ijson.ErrDuplicate:
		return duplicateKey
	case ie.Kind == ijson.ErrUTF8 && !escape:
		return fmt.Sprintf("has invalid UTF-8 at byte %d", at)
	case ie.Kind == ijson.ErrUTF8: // a lone surrogate
		return syntaxAt(at)
	case syntaxErr == nil:
		return ""
	case ie.Kind == ijson.ErrSyntax && ie.Offset >= int64(len(bytes.TrimRight(text, jsonSpace))):
		return "is empty or truncated JSON"
	case ie.Kind == ijson.ErrSyntax:
		return syntaxAt(at)
	}
	return fmt.Sprintf("is not I-JSON: %s at byte %d", ie.Kind, at)
}

func syntaxAt(offset int64) string {
	return fmt.Sprintf("is not valid JSON (syntax error at byte %d)", offset)
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
