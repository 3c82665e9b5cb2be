package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/internal/jsonnum"
)

// Limits on a request, each overridable through Options.
const (
	DefaultMaxRules  = 100
	DefaultMaxBounds = 100
	maxIDChars       = 200
)

// Detail values: the shape of the answer.
const (
	DetailFull    = "full"
	DetailCompact = "compact"
)

// Rule types of SPEC §3.5.
const (
	RuleSumEquals = "sum_equals"
	RuleGTE       = "gte"
	RuleLTE       = "lte"
	RuleExistsIn  = "exists_in"
	RuleUnique    = "unique"
)

// DefaultTolerance is a rule's tolerance when the caller gives none.
const DefaultTolerance = 1e-9

// defaultToleranceJSON is DefaultTolerance as it enters request_hash.
var defaultToleranceJSON = []byte("1e-9")

// Request is a decoded, validated verification request (SPEC §1).
type Request struct {
	TaskID             string
	AgentID            *string
	SubmittedOutput    any
	StrictContentCheck bool
	EnforceRules       bool
	Bounds             []Bound // sorted by path text
	Rules              []Rule
	Detail             string

	raw requestMembers // top-level members exactly as sent

	// schema is expected_schema decoded (map[string]any or bool), nil until
	// SchemaDocument decodes it: readMembers only checks that it is I-JSON,
	// and a hit of the compiled-schema cache never needs it decoded.
	schema   any
	maxDepth int // the member depth limit, for that decode
}

// Bound is one entry of bounds: every value at Path lies in [Min, Max].
type Bound struct {
	Key       string // the path as the caller wrote it
	Path      Path
	Min, Max  *Limit
	IfPresent bool

	decoded map[string]any // as sent, for request_hash
}

// Limit is a bound's min or max: a number, or an instant from an ISO 8601
// date or date-time.
type Limit struct {
	Number float64
	IsTime bool
	Time   time.Time
	Text   string // as written, for messages
}

// Rule is one cross-field rule (SPEC §3.5).
type Rule struct {
	Type  string
	Field Path
	// Target is the path the rule compares with or looks values up in
	// (equals_field, other_field or in_field, by Type); Number the number
	// it compares with (equals or value) when it names no path.
	Target    *Path
	Number    *float64
	Values    []any
	Tolerance float64
	IfPresent bool
	FieldText string // the field path as written

	decoded map[string]any // as sent, for request_hash
}

// FieldProblem is one entry of a 422 error's fields list. It never holds the
// caller's values.
type FieldProblem struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
}

// MaxReportedProblems is how many problems an *InvalidRequestError lists;
// the others found are only counted (Omitted), so that a request of a
// hundred thousand mistakes costs a short error, not a long one.
const MaxReportedProblems = 20

// InvalidRequestError lists the problems found in a request: the first
// MaxReportedProblems of them, and how many more there were.
type InvalidRequestError struct {
	Fields  []FieldProblem
	Omitted int // problems found but not listed in Fields
}

func (e *InvalidRequestError) Error() string {
	if len(e.Fields) == 0 {
		return "invalid request"
	}
	return fmt.Sprintf("invalid request: %s %s", e.Fields[0].Field, e.Fields[0].Problem)
}

// FieldNames lists the fields named by the problems, once each, in order.
func (e *InvalidRequestError) FieldNames() []string {
	var names []string
	for _, f := range e.Fields { // at most MaxReportedProblems
		if !slices.Contains(names, f.Field) {
			names = append(names, f.Field)
		}
	}
	return names
}

// problems collects a request's problems as its InvalidRequestError does:
// the first MaxReportedProblems, and a count of the rest.
type problems InvalidRequestError

func (p *problems) add(field, problem, fix string) {
	if p.skip() {
		return
	}
	p.Fields = append(p.Fields, FieldProblem{Field: field, Problem: problem, Fix: fix})
}

// skip counts a problem without listing it when the list is full, and says
// so: a caller may then spare itself the problem's wording.
func (p *problems) skip() bool {
	if len(p.Fields) < MaxReportedProblems {
		return false
	}
	p.Omitted++
	return true
}

// addUnknown records the problem of each key of m that is not in known,
// named under parent by memberName, by its position among m's sorted keys;
// the fix is unknownFix's.
func (p *problems) addUnknown(parent string, m map[string]any, known []string, problem, members string) {
	for j, k := range sortedKeys(m) {
		if !slices.Contains(known, k) && !p.skip() {
			p.add(memberName(parent, k, j), problem, unknownFix(k, known, members))
		}
	}
}

// unknownFix is the fix of an unknown member name, one of whose siblings
// are known: remove it, or, when it is a near miss of a known one
// (schema.ClosestName: enforceRules, expectedSchma), rename it. members
// says what the known ones are. It names only a known member, never the
// unknown one.
func unknownFix(name string, known []string, members string) string {
	if s, ok := schema.ClosestName(name, known); ok {
		return "Remove it, or rename it: did you mean `" + s + "`? " + members
	}
	return "Remove it; " + lowerFirst(members)
}

// lowerFirst is s with its first letter in lower case.
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// count is how many problems were found, listed or not.
func (p *problems) count() int { return len(p.Fields) + p.Omitted }

func (p *problems) err() error {
	if p.count() == 0 {
		return nil
	}
	e := InvalidRequestError(*p)
	return &e
}

var ruleFields = []string{
	"type", "field", "equals_field", "equals", "other_field", "value",
	"in_field", "values", "tolerance", "if_present",
}

var boundFields = []string{"min", "max", "if_present"}

// safeName matches member names short and plain enough to name in an error
// without echoing anything but a field path.
var safeName = regexp.MustCompile(`^[A-Za-z0-9_.$-]{1,64}$`)

// DecodeRequest decodes and validates a request body. Every problem is
// found at once and reported as an *InvalidRequestError, which lists the
// first MaxReportedProblems and counts the others.
func (v *Verifier) DecodeRequest(body []byte) (*Request, error) {
	var p problems
	memberOpts := &ijson.Options{MaxDepth: v.opts.maxDepth() - 1}
	r := &Request{Detail: DetailFull, maxDepth: memberOpts.MaxDepth}
	decoded, ok := readMembers(body, memberOpts, &r.raw, &p)
	if !ok {
		return nil, p.err()
	}
	// Bounds and rules sent before, byte for byte, are taken as decoded
	// then; others that were only checked are decoded now.
	var room keyRoom
	checksKey := appendRememberKey(room[:0], r.raw[fieldBounds], r.raw[fieldRules])
	seen, remembered := lookup(v.checksDecoded, checksKey)
	for _, i := range [...]int{fieldBounds, fieldRules} {
		if val, has := decoded.get(i); has && val == nil && !remembered {
			val, err := ijson.Decode(r.raw[i], memberOpts)
			if err != nil { // checked already: cannot happen
				return nil, fmt.Errorf("decoding %s: %w", topLevelFields[i], err)
			}
			decoded.set(i, val)
		}
	}
	r.decodeScalars(&decoded, &p)
	if remembered {
		r.Bounds, r.Rules = seen.bounds, seen.rules
	}
	if val, ok := decoded.get(fieldBounds); ok && val != nil {
		r.Bounds = v.decodeBounds(val, &p)
	}
	if val, ok := decoded.get(fieldRules); ok && val != nil {
		r.Rules = v.decodeRules(val, &p)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if !remembered {
		v.checksDecoded.put(string(checksKey), decodedChecks{bounds: r.Bounds, rules: r.Rules}, 4*len(checksKey))
	}
	return r, nil
}

// decodedChecks are a request's bounds and rules, decoded and valid. They
// are shared by every request that sent the same bytes, so nothing may
// modify them.
type decodedChecks struct {
	bounds []Bound
	rules  []Rule
}

// SchemaDocument returns expected_schema decoded: a map[string]any or a
// bool. DecodeRequest checks the schema without decoding it; it is decoded
// here on first use.
func (r *Request) SchemaDocument() (any, error) {
	if r.schema == nil {
		doc, err := ijson.Decode(r.raw[fieldSchema], &ijson.Options{MaxDepth: r.maxDepth})
		if err != nil {
			return nil, fmt.Errorf("decoding expected_schema: %w", err)
		}
		r.schema = doc
	}
	return r.schema, nil
}

func (r *Request) decodeScalars(decoded *decodedMembers, p *problems) {
	if r.raw[fieldTaskID] == nil {
		p.add("task_id", "is required", "Add task_id: your id for this piece of work, 1 to 200 characters.")
	} else if val, ok := decoded.get(fieldTaskID); ok {
		r.TaskID, _ = idString(val, "task_id", "must be a string", "Send task_id as a string of 1 to 200 characters.",
			"Shorten task_id to at most 200 characters (and at least 1).", p)
	}
	if val, ok := decoded.get(fieldAgentID); ok && val != nil {
		if s, ok := idString(val, "agent_id", "must be a string or null", "Send agent_id as a string of 1 to 200 characters, or null.",
			"Send agent_id with 1 to 200 characters, or null when there is no agent.", p); ok {
			r.AgentID = &s
		}
	}
	if r.raw[fieldSchema] == nil {
		p.add("expected_schema", "is required", "Add expected_schema: a JSON Schema (object or boolean), draft 2020-12 or draft-07.")
	} else if _, ok := decoded.get(fieldSchema); ok { // well-formed: its first byte says its type
		if raw := r.raw[fieldSchema]; raw[0] != '{' && raw[0] != 't' && raw[0] != 'f' {
			p.add("expected_schema", "must be a JSON Schema object or boolean", "Send expected_schema as an object such as {\"type\": \"object\"} (or true/false).")
		}
	}
	if r.raw[fieldOutput] == nil {
		p.add("submitted_output", "is required", "Add submitted_output: the JSON value to verify (null is a value; a missing key is not).")
	} else {
		r.SubmittedOutput = decoded.value[fieldOutput]
	}
	flag := func(field int) bool {
		val, _ := decoded.get(field)
		b, isBool := val.(bool)
		if val != nil && !isBool {
			p.add(topLevelFields[field], "must be a boolean or null", "Send true or false (the default, also taken for null, is false).")
		}
		return b
	}
	r.StrictContentCheck, r.EnforceRules = flag(fieldStrict), flag(fieldEnforce)
	if val, ok := decoded.get(fieldDetail); ok && val != nil {
		switch val {
		case DetailFull:
			r.Detail = DetailFull
		case DetailCompact:
			r.Detail = DetailCompact
		default:
			p.add("detail", "is not one of the allowed values", "Use 'full' (the default, also taken for null) or 'compact'.")
		}
	}
}

// idString reads task_id or agent_id, a string of 1 to 200 characters,
// recording a problem when it is not one. The ids go into the stored
// verdict: copies of their own, so that they do not hold the request's text.
func idString(val any, field, typeProblem, typeFix, lengthFix string, p *problems) (string, bool) {
	s, isString := val.(string)
	switch n := utf8.RuneCountInString(s); {
	case !isString:
		p.add(field, typeProblem, typeFix)
	case n == 0 || n > maxIDChars:
		p.add(field, "must be 1 to 200 characters long", lengthFix)
	default:
		return strings.Clone(s), true
	}
	return "", false
}

func (v *Verifier) decodeBounds(val any, p *problems) []Bound {
	obj, isObj := val.(map[string]any)
	switch {
	case !isObj:
		p.add("bounds", "must be an object or null", "Send bounds as an object mapping a path to {min, max, if_present}.")
		return nil
	case len(obj) > v.opts.maxBounds():
		p.add("bounds", fmt.Sprintf("has more than %d entries", v.opts.maxBounds()), fmt.Sprintf("Send at most %d bounds.", v.opts.maxBounds()))
		return nil
	}
	var out []Bound
	for i, key := range sortedKeys(obj) {
		path, err := ParsePath(key)
		field := boundName(key, i, err == nil)
		if err != nil {
			p.add(field, "has a key that is not a valid path: "+err.(*PathError).Problem, "Write the path as in `total`, `items[].price` or `meta[\"a.b\"]`.")
			continue
		}
		entry, isObj := obj[key].(map[string]any)
		if !isObj {
			p.add(field, "must be an object", "Send {\"min\": …, \"max\": …, \"if_present\": false}.")
			continue
		}
		p.addUnknown(field, entry, boundFields, "is not a known bound field", "A bound has min, max and if_present.")
		before := p.count()
		b := Bound{Key: key, Path: path, decoded: entry}
		b.Min, b.Max = decodeLimit(entry, "min", field, p), decodeLimit(entry, "max", field, p)
		b.IfPresent = ifPresent(entry, field, p)
		switch {
		case p.count() != before: // a member's problem, recorded
		case b.Min == nil && b.Max == nil:
			p.add(field, "needs min or max", "Give min, max, or both.")
		case b.Min != nil && b.Max != nil && b.Min.IsTime != b.Max.IsTime:
			p.add(field, "mixes a number and a date", "Give min and max of the same kind: both numbers or both ISO 8601 dates.")
		case b.Min != nil && b.Max != nil && (b.Min.Number > b.Max.Number || b.Min.Time.After(b.Max.Time)): // of one kind, the other's fields zero
			p.add(field, "has min greater than max", "Swap min and max, or widen the range.")
		default:
			out = append(out, b)
		}
	}
	return out
}

// decodeLimit reads min or max, nil when it is not set or has a problem
// (recorded).
func decodeLimit(entry map[string]any, name, field string, p *problems) *Limit {
	val, ok := member(entry, name)
	if !ok {
		return nil
	}
	switch x := val.(type) {
	case json.Number:
		f, err := jsonnum.ParseFloat(string(x))
		if err != nil {
			p.add(field+"."+name, "is not a finite number", "Send a finite number.")
			return nil
		}
		return &Limit{Number: f, Text: string(x)}
	case string:
		t, ok := parseTime(x)
		if !ok {
			p.add(field+"."+name, "is neither a number nor an ISO 8601 date or date-time",
				"Send a number, a date like 2026-01-31, or a date-time like 2026-01-31T12:00:00Z.")
			return nil
		}
		return &Limit{IsTime: true, Time: t, Text: x}
	default:
		p.add(field+"."+name, "must be a number or an ISO 8601 date string", "Send a number or a date like 2026-01-31.")
		return nil
	}
}

// ifPresent reads a bound's or rule's if_present, false when not set,
// recording a problem when it is not a boolean.
func ifPresent(obj map[string]any, field string, p *problems) bool {
	val, sent := member(obj, "if_present")
	b, isBool := val.(bool)
	if sent && !isBool {
		p.add(field+".if_present", "must be a boolean", "Send true or false (the default is false).")
	}
	return b
}

func (v *Verifier) decodeRules(val any, p *problems) []Rule {
	list, isArr := val.([]any)
	switch {
	case !isArr:
		p.add("rules", "must be an array or null", "Send rules as an array of rule objects.")
		return nil
	case len(list) > v.opts.maxRules():
		p.add("rules", fmt.Sprintf("has more than %d rules", v.opts.maxRules()), fmt.Sprintf("Send at most %d rules.", v.opts.maxRules()))
		return nil
	}
	out := make([]Rule, 0, len(list))
	for i, item := range list {
		field := "rules[" + strconv.Itoa(i) + "]"
		obj, isObj := item.(map[string]any)
		if !isObj {
			p.add(field, "must be an object", "Send each rule as an object with type and field.")
			continue
		}
		if r, ok := decodeRule(obj, field, p); ok {
			out = append(out, r)
		}
	}
	return out
}

// ruleTargets says, per rule type, which of the alternative comparison
// fields it takes; exactly one of a pair must be given.
var ruleTargets = map[string][2]string{
	RuleSumEquals: {"equals_field", "equals"},
	RuleGTE:       {"other_field", "value"},
	RuleLTE:       {"other_field", "value"},
	RuleExistsIn:  {"in_field", "values"},
	RuleUnique:    {},
}

const ruleTypeFix = "Use one of: 'sum_equals', 'gte', 'lte', 'exists_in' or 'unique'."

func decodeRule(obj map[string]any, field string, p *problems) (Rule, bool) {
	before := p.count()
	r := Rule{Tolerance: DefaultTolerance, decoded: obj}
	p.addUnknown(field, obj, ruleFields, "is not a known rule field",
		"A rule has type, field, equals_field, equals, other_field, value, in_field, values, tolerance and if_present.")
	typ, isString := obj["type"].(string)
	targets, known := ruleTargets[typ]
	switch {
	case obj["type"] == nil:
		p.add(field+".type", "is required", ruleTypeFix)
		return r, false
	case !isString || !known:
		p.add(field+".type", "is not one of the allowed values", ruleTypeFix)
		return r, false
	}
	r.Type = typ
	if text, ok := obj["field"].(string); !ok {
		p.add(field+".field", "is required and must be a path string", "Name the value to check, e.g. \"line_items[].line_total\".")
	} else if path, err := ParsePath(text); err != nil {
		p.add(field+".field", "is not a valid path: "+err.(*PathError).Problem, "Write the path as in `total`, `items[].price` or `meta[\"a.b\"]`.")
	} else {
		r.Field, r.FieldText = path, text
	}
	// Fields that belong to another rule type are an error when they carry
	// a value: a typo must not silently weaken a check. null is "not set".
	for _, other := range []string{"equals_field", "equals", "other_field", "value", "in_field", "values"} {
		if _, sent := member(obj, other); sent && other != targets[0] && other != targets[1] {
			p.add(field+"."+other, "does not apply to rule type "+typ, ruleFieldFixes[typ])
		}
	}
	if targets != [2]string{} {
		pathName, valueName := targets[0], targets[1]
		_, hasPath := member(obj, pathName)
		_, hasValue := member(obj, valueName)
		switch {
		case hasPath && hasValue:
			p.add(field, fmt.Sprintf("has both %s and %s", pathName, valueName), fmt.Sprintf("Keep exactly one of %s or %s.", pathName, valueName))
		case !hasPath && !hasValue:
			p.add(field, fmt.Sprintf("needs %s or %s", pathName, valueName), fmt.Sprintf("Add exactly one of %s or %s.", pathName, valueName))
		case hasPath:
			text, ok := obj[pathName].(string)
			path, err := ParsePath(text)
			if !ok || err != nil {
				p.add(field+"."+pathName, "is not a valid path", "Write the path as in `total` or `items[].id`.")
				break
			}
			r.Target = &path
		case valueName == "values":
			list, ok := obj["values"].([]any)
			if !ok {
				p.add(field+".values", "must be an array", "Send values as an array of allowed JSON values.")
				break
			}
			r.Values = list
		default:
			n, ok := asNumber(obj[valueName])
			if !ok {
				p.add(field+"."+valueName, "must be a number", "Send a finite number.")
				break
			}
			r.Number = &n
		}
	}
	if t, sent := member(obj, "tolerance"); sent {
		n, ok := asNumber(t)
		if !ok || n < 0 {
			p.add(field+".tolerance", "must be a number ≥ 0", "Send a small non-negative number such as 0.01 (the default is 1e-9).")
		} else {
			r.Tolerance = n
		}
	}
	r.IfPresent = ifPresent(obj, field, p)
	return r, p.count() == before
}

// member returns obj's member name and whether it is set: present and not
// null, since null means "not set" for every optional member (SPEC §1).
func member(obj map[string]any, name string) (any, bool) {
	v, ok := obj[name]
	return v, ok && v != nil
}

// ruleFieldFixes are, per rule type, the fix for a member of another type.
var ruleFieldFixes = map[string]string{
	RuleSumEquals: "sum_equals compares with equals_field or equals; remove the other field.",
	RuleGTE:       "gte compares with other_field or value; remove the other field.",
	RuleLTE:       "lte compares with other_field or value; remove the other field.",
	RuleExistsIn:  "exists_in looks values up in in_field or values; remove the other field.",
	RuleUnique:    "unique takes only field (and if_present); remove the other field.",
}

// memberName names an object member in an error: its own name when that is
// a plain identifier, otherwise its position, so nothing the caller wrote is
// echoed.
func memberName(parent, name string, position int) string {
	prefix := parent
	if prefix != "" {
		prefix += "."
	}
	if safeName.MatchString(name) {
		return prefix + name
	}
	return fmt.Sprintf("%s(member #%d)", prefix, position+1)
}

// boundName names a bound in an error by its path key when that is a valid,
// plain path, or else by its position among the sorted keys.
func boundName(key string, position int, valid bool) string {
	if valid && safePathKey.MatchString(key) {
		return "bounds[" + strconv.Quote(key) + "]"
	}
	return fmt.Sprintf("bounds(entry #%d)", position+1)
}

// safePathKey matches bound keys short and plain enough to name in an error.
var safePathKey = regexp.MustCompile(`^[A-Za-z0-9_.$\[\]-]{1,100}$`)

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
