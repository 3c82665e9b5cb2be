package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/internal/jsonesc"
)

// VerifiedAtLayout is the format of verified_at: UTC, RFC 3339 with
// microseconds and a +00:00 offset.
const VerifiedAtLayout = "2006-01-02T15:04:05.000000+00:00"

// Verify block constants (SPEC §5).
const (
	Canonicalization = "RFC 8785 (JCS)"
	HashAlgorithm    = "SHA-256"
)

// AnswerMeta is what the caller supplies around an outcome: identity, time,
// hashes and where to check the receipt.
type AnswerMeta struct {
	VerificationID string
	VerifiedAt     time.Time
	Version        string
	Hashes         Hashes
	Verify         VerifyBlock
}

// VerifyBlock tells a reader how to check the receipt: where the signing
// key is published (PublicKeyURL and MCP, with a public URL) or the key
// itself (PublicKey, standard base64 of its 32 raw bytes, without one: stdio
// and the CLI, SPEC §5). Empty members are left out.
type VerifyBlock struct {
	PublicKeyURL     string `json:"public_key_url,omitempty"`
	PublicKey        string `json:"public_key,omitempty"`
	KeyVersion       string `json:"key_version"`
	Canonicalization string `json:"canonicalization"`
	HashAlgorithm    string `json:"hash_algorithm"`
	Service          string `json:"service"`
	MCP              string `json:"mcp,omitempty"`
}

// NextAction is one step the caller should take next.
type NextAction struct {
	Action string   `json:"action"`
	Using  string   `json:"using,omitempty"`
	For    string   `json:"for,omitempty"`
	Fields []string `json:"fields,omitempty"`
}

// Summary heads the answer.
type Summary struct {
	Result         string   `json:"result"`
	BlockingChecks []string `json:"blocking_checks"`
}

// ErrorDetail is one blocking failure in errors_detail.
type ErrorDetail struct {
	Check    string `json:"check"`
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Found    string `json:"found"`
	Message  string `json:"message"`
}

// Flag is one failed integrity check, blocking or not.
type Flag struct {
	Check    string `json:"check"`
	Field    string `json:"field"`
	Severity string `json:"severity"`
	Detail   string `json:"detail"`
}

// Hint is one failed check, concrete enough to repair the output.
type Hint struct {
	Source   string `json:"source"`
	Check    string `json:"check"`
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Found    string `json:"found"`
}

// Answer is the unsigned answer of SPEC §4, its fields in the documented
// order. Fields of the full shape only are nil in a compact answer.
type Answer struct {
	Summary            Summary       `json:"summary"`
	NextActions        []NextAction  `json:"next_actions"`
	Result             string        `json:"result"`
	VerificationID     string        `json:"verification_id"`
	TaskID             string        `json:"task_id"`
	AgentID            *string       `json:"agent_id"`
	OutputHash         string        `json:"output_hash"`
	SchemaHash         string        `json:"schema_hash"`
	RulesHash          string        `json:"rules_hash"`
	RequestHash        *string       `json:"request_hash,omitempty"`
	VerifiedAt         string        `json:"verified_at"`
	VerifierVersion    string        `json:"verifier_version"`
	EnforceRules       bool          `json:"enforce_rules"`
	StrictContentCheck bool          `json:"strict_content_check"`
	Errors             []string      `json:"errors,omitzero"`
	ErrorsTotal        *int          `json:"errors_total,omitempty"`
	ErrorsOmitted      *int          `json:"errors_omitted,omitempty"`
	ErrorsDetail       []ErrorDetail `json:"errors_detail,omitzero"`
	ErrorsDetailTotal  *int          `json:"errors_detail_total,omitempty"`
	ErrorsDetailOmit   *int          `json:"errors_detail_omitted,omitempty"`
	Flags              []Flag        `json:"flags,omitzero"`
	FlagsTotal         *int          `json:"flags_total,omitempty"`
	FlagsOmitted       *int          `json:"flags_omitted,omitempty"`
	Hints              []Hint        `json:"hints,omitzero"`
	HintsTotal         *int          `json:"hints_total,omitempty"`
	HintsOmitted       *int          `json:"hints_omitted,omitempty"`
	SchemaCompliance   *Ratio        `json:"schema_compliance,omitempty"`
	IntegrityChecks    *Ratio        `json:"integrity_checks,omitempty"`
	Overall            *Ratio        `json:"overall,omitempty"`
	Verify             VerifyBlock   `json:"verify"`
}

// NewAnswer builds the answer for a request's outcome, in the shape the
// request's detail asks for.
func (v *Verifier) NewAnswer(req *Request, out *Outcome, meta AnswerMeta) *Answer {
	a := &Answer{
		Summary:            Summary{Result: out.Result(), BlockingChecks: out.BlockingChecks()},
		Result:             out.Result(),
		VerificationID:     meta.VerificationID,
		TaskID:             req.TaskID,
		AgentID:            req.AgentID,
		OutputHash:         meta.Hashes.Output,
		SchemaHash:         meta.Hashes.Schema,
		RulesHash:          meta.Hashes.Rules,
		VerifiedAt:         formatVerifiedAt(meta.VerifiedAt),
		VerifierVersion:    meta.Version,
		EnforceRules:       req.EnforceRules,
		StrictContentCheck: req.StrictContentCheck,
		Verify:             meta.Verify,
	}
	a.Verify.Canonicalization = Canonicalization
	a.Verify.HashAlgorithm = HashAlgorithm
	if out.Pass {
		a.NextActions = []NextAction{{Action: "attach_receipt", For: "seller"}, {Action: "proceed_to_payment", For: "buyer"}}
	} else {
		a.NextActions = []NextAction{{Action: "repair_and_reverify", Using: "hints"}}
	}
	var errs []string
	var details []ErrorDetail
	var flags []Flag
	hints := []Hint{}
	for _, f := range out.Findings {
		if f.Blocking {
			line := fmt.Sprintf("%s: %s at '%s': %s", f.Gate, f.Check, f.callerField(), f.Message)
			errs = append(errs, line)
			details = append(details, ErrorDetail{Check: f.Check, Path: f.Path, Expected: f.Expected, Found: f.Found, Message: line})
		}
		if f.flagged() {
			severity := "warning"
			if f.Blocking {
				severity = "error"
			}
			flags = append(flags, Flag{Check: f.Check, Field: f.callerField(), Severity: severity, Detail: f.Message})
		}
		hints = append(hints, Hint{Source: f.Source, Check: f.Check, Path: f.Path, Expected: f.Expected, Found: f.Found})
	}
	if req.Detail == DetailCompact {
		return a
	}
	a.RequestHash = &meta.Hashes.Request
	limit := v.ListCap()
	// The eight counts share one allocation. The findings the outcome
	// omitted count in the totals.
	counts := new([8]int)
	om := &out.Omitted
	a.Errors, a.ErrorsTotal, a.ErrorsOmitted = capList(errs, len(errs)+om.Blocking, limit, counts[0:2])
	a.ErrorsDetail, a.ErrorsDetailTotal, a.ErrorsDetailOmit = capList(details, len(details)+om.Blocking, limit, counts[2:4])
	a.Flags, a.FlagsTotal, a.FlagsOmitted = capList(flags, len(flags)+om.Integrity, limit, counts[4:6])
	a.Hints, a.HintsTotal, a.HintsOmitted = capList(hints, len(hints)+om.All, limit, counts[6:8])
	a.SchemaCompliance, a.IntegrityChecks, a.Overall = &out.Schema, &out.Integrity, &out.Overall
	return a
}

// formatVerifiedAt is t.UTC().Format(VerifiedAtLayout), written digit by
// digit for the years 0 to 9999 (FuzzFormatVerifiedAt): the layout is
// fixed, so its parsing and the formatter's general steps are spared.
func formatVerifiedAt(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(VerifiedAtLayout)
	}
	hour, minute, second := t.Clock()
	b := []byte(VerifiedAtLayout)
	for _, f := range [...]struct{ at, width, value int }{
		{0, 4, year}, {5, 2, int(month)}, {8, 2, day}, {11, 2, hour}, {14, 2, minute}, {17, 2, second},
		{20, 6, t.Nanosecond() / 1000},
	} {
		v := f.value
		for i := f.at + f.width - 1; i >= f.at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	return string(b)
}

// capList keeps the first limit items (never nil, so an empty list is sent
// as []) and reports the total, the items and those counted without being
// listed, and how many were left out, which it stores in counts[0] and
// counts[1].
func capList[T any](items []T, total, limit int, counts []int) ([]T, *int, *int) {
	if len(items) > limit {
		items = items[:limit]
	}
	if items == nil {
		items = []T{}
	}
	counts[0], counts[1] = total, total-len(items)
	return items, &counts[0], &counts[1]
}

// Marshal encodes the unsigned answer, without HTML escaping: exactly the
// bytes MarshalJSON gives, written field by field instead of by reflection.
func (a *Answer) Marshal() ([]byte, error) {
	return a.AppendMarshal(make([]byte, 0, 2048))
}

// AppendMarshal appends what Marshal gives to dst. On error dst is returned
// unchanged.
func (a *Answer) AppendMarshal(dst []byte) ([]byte, error) {
	if !a.finite() {
		b, err := MarshalJSON(a) // for its error
		if err != nil {
			return dst, err
		}
		return append(dst, b...), nil
	}
	w := answerWriter{buf: dst}
	a.write(&w)
	return w.buf, nil
}

// MarshalCanonical encodes the unsigned answer in RFC 8785 form: the
// canonical form of the JSON text Marshal gives (members sorted, strings and
// numbers in canonical form), which is what a receipt's signature covers.
// Written directly, it spares the signer parsing and re-sorting the answer.
func (a *Answer) MarshalCanonical() ([]byte, error) {
	return a.AppendCanonical(make([]byte, 0, 2048))
}

// AppendCanonical appends what MarshalCanonical gives to dst, so a caller
// that only signs the canonical form can write it into a buffer it reuses.
// On error dst is returned unchanged.
func (a *Answer) AppendCanonical(dst []byte) ([]byte, error) {
	if !a.finite() {
		return dst, errors.New("encoding answer: a ratio is not a finite number")
	}
	w := answerWriter{buf: dst, canonical: true}
	a.write(&w)
	return w.buf, nil
}

func (a *Answer) finite() bool {
	for _, r := range []*Ratio{a.SchemaCompliance, a.IntegrityChecks, a.Overall} {
		if r != nil && (math.IsNaN(r.Ratio) || math.IsInf(r.Ratio, 0)) {
			return false
		}
	}
	return true
}

// answerMembers are the answer's member names in documented order, as its
// struct tags give them, with their RFC 8785 order: a fixed table, never
// written after initialization.
var (
	answerMembers = newMemberTable(
		"summary", "next_actions", "result", "verification_id", "task_id", "agent_id",
		"output_hash", "schema_hash", "rules_hash", "request_hash", "verified_at", "verifier_version",
		"enforce_rules", "strict_content_check", "errors", "errors_total", "errors_omitted",
		"errors_detail", "errors_detail_total", "errors_detail_omitted", "flags", "flags_total",
		"flags_omitted", "hints", "hints_total", "hints_omitted", "schema_compliance",
		"integrity_checks", "overall", "verify",
	)
)

// write writes the answer as its struct tags direct encoding/json to.
func (a *Answer) write(w *answerWriter) {
	w.object(&answerMembers, func(i int) bool {
		switch i {
		case 9:
			return a.RequestHash != nil
		case 14:
			return a.Errors != nil
		case 15:
			return a.ErrorsTotal != nil
		case 16:
			return a.ErrorsOmitted != nil
		case 17:
			return a.ErrorsDetail != nil
		case 18:
			return a.ErrorsDetailTotal != nil
		case 19:
			return a.ErrorsDetailOmit != nil
		case 20:
			return a.Flags != nil
		case 21:
			return a.FlagsTotal != nil
		case 22:
			return a.FlagsOmitted != nil
		case 23:
			return a.Hints != nil
		case 24:
			return a.HintsTotal != nil
		case 25:
			return a.HintsOmitted != nil
		case 26:
			return a.SchemaCompliance != nil
		case 27:
			return a.IntegrityChecks != nil
		case 28:
			return a.Overall != nil
		}
		return true
	}, func(i int) {
		switch i {
		case 0:
			w.object(&summaryMembers, always, func(i int) {
				if i == 0 {
					w.str(a.Summary.Result)
				} else {
					w.strings(a.Summary.BlockingChecks)
				}
			})
		case 1:
			w.list(a.NextActions == nil, len(a.NextActions), func(i int) { a.NextActions[i].write(w) })
		case 2:
			w.str(a.Result)
		case 3:
			w.str(a.VerificationID)
		case 4:
			w.str(a.TaskID)
		case 5:
			if a.AgentID == nil {
				w.buf = append(w.buf, "null"...)
			} else {
				w.str(*a.AgentID)
			}
		case 6:
			w.str(a.OutputHash)
		case 7:
			w.str(a.SchemaHash)
		case 8:
			w.str(a.RulesHash)
		case 9:
			w.str(*a.RequestHash)
		case 10:
			w.str(a.VerifiedAt)
		case 11:
			w.str(a.VerifierVersion)
		case 12:
			w.buf = strconv.AppendBool(w.buf, a.EnforceRules)
		case 13:
			w.buf = strconv.AppendBool(w.buf, a.StrictContentCheck)
		case 14:
			w.strings(a.Errors)
		case 15:
			w.buf = strconv.AppendInt(w.buf, int64(*a.ErrorsTotal), 10)
		case 16:
			w.buf = strconv.AppendInt(w.buf, int64(*a.ErrorsOmitted), 10)
		case 17:
			w.list(false, len(a.ErrorsDetail), func(i int) { w.strs(&errorDetailMembers, a.ErrorsDetail[i].values()) })
		case 18:
			w.buf = strconv.AppendInt(w.buf, int64(*a.ErrorsDetailTotal), 10)
		case 19:
			w.buf = strconv.AppendInt(w.buf, int64(*a.ErrorsDetailOmit), 10)
		case 20:
			w.list(false, len(a.Flags), func(i int) { w.strs(&flagMembers, a.Flags[i].values()) })
		case 21:
			w.buf = strconv.AppendInt(w.buf, int64(*a.FlagsTotal), 10)
		case 22:
			w.buf = strconv.AppendInt(w.buf, int64(*a.FlagsOmitted), 10)
		case 23:
			w.list(false, len(a.Hints), func(i int) { w.strs(&hintMembers, a.Hints[i].values()) })
		case 24:
			w.buf = strconv.AppendInt(w.buf, int64(*a.HintsTotal), 10)
		case 25:
			w.buf = strconv.AppendInt(w.buf, int64(*a.HintsOmitted), 10)
		case 26:
			a.SchemaCompliance.write(w)
		case 27:
			a.IntegrityChecks.write(w)
		case 28:
			a.Overall.write(w)
		case 29:
			a.Verify.write(w)
		}
	})
}

// Member tables of the answer's inner objects, as answerMembers.
var (
	summaryMembers     = newMemberTable("result", "blocking_checks")
	nextActionMembers  = newMemberTable("action", "using", "for", "fields")
	errorDetailMembers = newMemberTable("check", "path", "expected", "found", "message")
	flagMembers        = newMemberTable("check", "field", "severity", "detail")
	hintMembers        = newMemberTable("source", "check", "path", "expected", "found")
	verifyMembers      = newMemberTable("public_key_url", "public_key", "key_version", "canonicalization", "hash_algorithm", "service", "mcp")
	ratioMembers       = newMemberTable("ratio", "passed", "total")
)

// memberTable is the member names of one of the answer's objects, plain
// ASCII in documented order: each as written before its value (`"name":`),
// and their RFC 8785 order, which for ASCII is byte order.
type memberTable struct {
	keys   []string
	sorted []int
}

func newMemberTable(names ...string) memberTable {
	t := memberTable{keys: make([]string, len(names)), sorted: make([]int, len(names))}
	for i, name := range names {
		t.keys[i] = `"` + name + `":`
		t.sorted[i] = i
	}
	slices.SortFunc(t.sorted, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	return t
}

func (d *ErrorDetail) values() []string {
	return []string{d.Check, d.Path, d.Expected, d.Found, d.Message}
}
func (f *Flag) values() []string { return []string{f.Check, f.Field, f.Severity, f.Detail} }
func (h *Hint) values() []string { return []string{h.Source, h.Check, h.Path, h.Expected, h.Found} }

// write writes the verify block, leaving out its empty omitempty members.
func (v *VerifyBlock) write(w *answerWriter) {
	values := []string{v.PublicKeyURL, v.PublicKey, v.KeyVersion, v.Canonicalization, v.HashAlgorithm, v.Service, v.MCP}
	w.object(&verifyMembers, func(i int) bool {
		switch i { // the omitempty members
		case 0, 1, 6:
			return values[i] != ""
		}
		return true
	}, func(i int) { w.str(values[i]) })
}

func (n *NextAction) write(w *answerWriter) {
	w.object(&nextActionMembers, func(i int) bool {
		switch i { // the omitempty members
		case 1:
			return n.Using != ""
		case 2:
			return n.For != ""
		case 3:
			return len(n.Fields) > 0
		}
		return true
	}, func(i int) {
		switch i {
		case 0:
			w.str(n.Action)
		case 1:
			w.str(n.Using)
		case 2:
			w.str(n.For)
		case 3:
			w.strings(n.Fields)
		}
	})
}

func (r *Ratio) write(w *answerWriter) {
	w.object(&ratioMembers, always, func(i int) {
		switch i {
		case 0:
			w.float(r.Ratio)
		case 1:
			w.buf = strconv.AppendInt(w.buf, int64(r.Passed), 10)
		case 2:
			w.buf = strconv.AppendInt(w.buf, int64(r.Total), 10)
		}
	})
}

// answerWriter writes an answer as JSON text: in its documented member
// order with encoding/json's escaping (the wire form), or, when canonical,
// in RFC 8785 form.
type answerWriter struct {
	buf       []byte
	canonical bool
}

// object writes an object whose members t names. has(i) says whether
// member i is written (omitempty and omitzero), value(i) writes its value.
func (w *answerWriter) object(t *memberTable, has func(int) bool, value func(int)) {
	w.buf = append(w.buf, '{')
	first := true
	for k := range t.keys {
		i := k
		if w.canonical {
			i = t.sorted[k]
		}
		if !has(i) {
			continue
		}
		if !first {
			w.buf = append(w.buf, ',')
		}
		first = false
		w.buf = append(w.buf, t.keys[i]...)
		value(i)
	}
	w.buf = append(w.buf, '}')
}

// strs writes an object of string members.
func (w *answerWriter) strs(t *memberTable, values []string) {
	w.object(t, always, func(i int) { w.str(values[i]) })
}

// list writes an array of n elements, or null for a nil slice.
func (w *answerWriter) list(isNil bool, n int, elem func(int)) {
	if isNil {
		w.buf = append(w.buf, "null"...)
		return
	}
	w.buf = append(w.buf, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		elem(i)
	}
	w.buf = append(w.buf, ']')
}

func (w *answerWriter) strings(list []string) {
	w.list(list == nil, len(list), func(i int) { w.str(list[i]) })
}

func always(int) bool { return true }

// str writes a string: as encoding/json does without HTML escaping, or
// canonically (the text that decoding the former and writing it per RFC
// 8785 gives, so invalid UTF-8 becomes U+FFFD in both).
func (w *answerWriter) str(s string) {
	const hex = "0123456789abcdef"
	w.buf = append(w.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if i = jsonesc.PlainRunString(s, i); i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			w.buf = append(w.buf, s[start:i]...)
			switch b {
			case '\\', '"':
				w.buf = append(w.buf, '\\', b)
			case '\b':
				w.buf = append(w.buf, '\\', 'b')
			case '\f':
				w.buf = append(w.buf, '\\', 'f')
			case '\n':
				w.buf = append(w.buf, '\\', 'n')
			case '\r':
				w.buf = append(w.buf, '\\', 'r')
			case '\t':
				w.buf = append(w.buf, '\\', 't')
			default:
				w.buf = append(w.buf, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			w.buf = append(w.buf, s[start:i]...)
			if w.canonical {
				w.buf = utf8.AppendRune(w.buf, utf8.RuneError)
			} else {
				w.buf = append(w.buf, `\ufffd`...)
			}
			start = i + size
		case (c == '\u2028' || c == '\u2029') && !w.canonical:
			w.buf = append(w.buf, s[start:i]...)
			w.buf = append(w.buf, '\\', 'u', '2', '0', '2', hex[c&0xF])
			start = i + size
		}
		i += size
	}
	w.buf = append(w.buf, s[start:]...)
	w.buf = append(w.buf, '"')
}

// float writes a finite number as encoding/json does; for the values an
// answer holds that is also its RFC 8785 form (ES6 formatting, which
// encoding/json follows), except that RFC 8785 writes -0 as 0.
func (w *answerWriter) float(f float64) {
	if w.canonical && f == 0 {
		w.buf = append(w.buf, '0')
		return
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && !math.Signbit(f) {
		// An integer (a ratio of 1 or 0) is its digits in both forms.
		w.buf = strconv.AppendInt(w.buf, int64(f), 10)
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.buf = strconv.AppendFloat(w.buf, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as in encoding/json and ES6.
		if n := len(w.buf); n >= 4 && w.buf[n-4] == 'e' && w.buf[n-3] == '-' && w.buf[n-2] == '0' {
			w.buf[n-2] = w.buf[n-1]
			w.buf = w.buf[:n-1]
		}
	}
}

// MarshalJSON encodes v as compact JSON without HTML escaping, the form
// every answer of the service is written in.
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// WithMember appends one member to the end of a JSON object: the answer and
// its attestation, which is signed over the rest and so comes last. Like
// append, it may write into object's spare capacity; use only the result.
func WithMember(object []byte, name string, value []byte) []byte {
	object = bytes.TrimRight(object, " \n")
	hasMembers := len(object) > 2
	out := slices.Grow(object[:len(object)-1], len(name)+len(value)+4)
	if hasMembers {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	out = append(out, '"', ':')
	out = append(out, value...)
	return append(out, '}')
}
