package engine

import (
	"bytes"
	"errors"
	"fmt"
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
	var nameRoom [numFields]string
	list, ok := ijson.DecodeMembers(room[:0], bytes.Clone(body), string(body), opts, decodedUpFront)
	names, unknown := nameRoom[:0], false
	for _, m := range list { // none when something is malformed
		names = append(names, m.Name)
		if i := slices.Index(topLevelFields, m.Name); i >= 0 {
			raw[i] = m.Raw
			decoded.set(i, m.Value)
		} else {
			unknown = true
		}
	}
	if !ok { // something is malformed: split the body to find what, and where
		var fault *FieldProblem
		if names, fault = splitObject(body, opts.MaxDepth, raw); fault != nil {
			p.add(fault.Field, fault.Problem, fault.Fix)
			return decoded, false
		}
	}
	if unknown || !ok { // else every member is known and decoded or checked
		decodeMembers(names, raw, &decoded, opts, p)
	}
	return decoded, true
}

// decodedUpFront says which members a well-formed body's first read
// decodes: the known ones but expected_schema, bounds and rules, which are
// decoded when needed (or remembered), and no unknown one, which is
// refused by its name.
func decodedUpFront(name string) bool {
	i := slices.Index(topLevelFields, name)
	return i >= 0 && i != fieldSchema && i != fieldBounds && i != fieldRules
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
			if !p.skip() { // when the list is full, memberName is spared
				p.add(memberName("", name, i), "is not a known field", unknownFix(name, topLevelFields,
					"The fields are: task_id, agent_id, expected_schema, submitted_output, strict_content_check, bounds, rules, enforce_rules, detail."))
			}
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

// splitObject finds what is wrong with a body ijson.DecodeMembers refused.
// A body that is well-formed but for numbers or depth, which decodeMembers
// reports member by member, splits: it returns every member's name, in the
// body's order, and copies the known members' values into raw. Otherwise
// it returns the body's first problem (ijson's scan stops there), named at
// the member whose value holds it (ijson.SplitMembers, checking the
// grammar alone, says where each member lies), or else at "body".
// maxDepth is a member value's nesting limit (the body's is one more).
func splitObject(body []byte, maxDepth int, raw *requestMembers) ([]string, *FieldProblem) {
	err := ijson.Check(body, &ijson.Options{MaxDepth: maxDepth + 1})
	var ie *ijson.Error
	errors.As(err, &ie)
	text := bytes.TrimLeft(body, jsonSpace)
	if len(text) == 0 || text[0] != '{' {
		return nil, notObject(body, ie, len(body)-len(text), maxDepth)
	}
	members, in, serr := ijson.SplitMembers(body, ijson.SplitGrammarOnly)
	switch {
	case ie == nil || (ie.Kind == ijson.ErrNumber || ie.Kind == ijson.ErrDepth) && serr == nil:
		ie = nil // the body splits
	case ie.Kind == ijson.ErrTrailing:
		return nil, bodyError("has data after the JSON object")
	}
	var names []string
	seen := make(map[string]bool)
	for i, m := range members {
		if passed(int64(m.NameEnd), ie) {
			break // the fault is not in a member's value
		}
		if ie != nil && (i == in || passed(int64(m.End), ie)) {
			return nil, faultError(body, ie, memberName("", m.Name, len(names)), maxDepth)
		}
		if i == in {
			break
		}
		if seen[m.Name] {
			return nil, bodyError(duplicateKey)
		}
		seen[m.Name] = true
		if i := slices.Index(topLevelFields, m.Name); i >= 0 {
			raw[i] = m.Raw
		}
		names = append(names, m.Name)
	}
	switch {
	case ie != nil:
		return nil, faultError(body, ie, "body", maxDepth)
	case serr != nil: // the grammar held where ijson's scan found no fault: cannot happen
		return nil, bodyError("is not valid JSON")
	}
	return names, nil
}

// passed reports whether a reader at offset has read past the fault ie, if
// any: a duplicate name and a number outside the range end where ijson's
// scan stops.
func passed(offset int64, ie *ijson.Error) bool {
	return ie != nil && (offset > ie.Offset || offset == ie.Offset && (ie.Kind == ijson.ErrDuplicate || ie.Kind == ijson.ErrNumber))
}

// notObject is the error of a body that is not a JSON object; ie is the
// first problem in it, if any, and start where its value starts.
func notObject(body []byte, ie *ijson.Error, start, maxDepth int) *FieldProblem {
	switch {
	case ie != nil && ie.Kind == ijson.ErrDepth:
		return bodyError("must be a JSON object (and it " + depthProblem(maxDepth+1) + ")")
	case ie != nil && ie.Kind == ijson.ErrSyntax && ie.Offset == int64(start):
		return bodyError(problemAt(body, ie)) // not even a JSON value
	}
	return bodyError("must be a JSON object")
}

// faultError is the error of ie, the first problem in body, in field.
func faultError(body []byte, ie *ijson.Error, field string, maxDepth int) *FieldProblem {
	if ie.Kind == ijson.ErrDepth {
		depth := &ijson.Error{Kind: ijson.ErrDepth, Limit: maxDepth}
		return &FieldProblem{Field: field, Problem: depthProblem(maxDepth), Fix: depth.Fix()}
	}
	return &FieldProblem{Field: field, Problem: problemAt(body, ie), Fix: bodyFix}
}

const (
	jsonSpace    = " \t\r\n"
	duplicateKey = "has a duplicate object key (I-JSON forbids it)"
)

// problemAt words ie, the first problem in body, as a predicate of the field
// it is in and without quoting the input.
func problemAt(body []byte, ie *ijson.Error) string {
	at := ie.Offset
	escape := at < int64(len(body)) && body[at] == '\\'
	switch {
	case ie.Kind == ijson.ErrDuplicate:
		return duplicateKey
	case ie.Kind == ijson.ErrUTF8 && !escape:
		return fmt.Sprintf("has invalid UTF-8 at byte %d", at)
	case ie.Kind == ijson.ErrSyntax && at >= int64(len(bytes.TrimRight(body, jsonSpace))):
		return "is empty or truncated JSON"
	case ie.Kind == ijson.ErrSyntax || ie.Kind == ijson.ErrUTF8: // a lone surrogate is a syntax error
		return fmt.Sprintf("is not valid JSON (syntax error at byte %d)", at)
	}
	return fmt.Sprintf("is not I-JSON: %s at byte %d", ie.Kind, at)
}

// bodyFix is the fix of a body that does not split into members.
const bodyFix = "Send one JSON object (I-JSON, RFC 7493) with the fields of the verification request."

func bodyError(problem string) *FieldProblem {
	return &FieldProblem{Field: "body", Problem: problem, Fix: bodyFix}
}
