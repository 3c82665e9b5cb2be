package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/tools"
)

// jsontextToolArgs is toolArgs as it was written over jsontext's decoder,
// the reference the ijson version is held to: the same members, or the
// same error naming the same field with the same words.
func jsontextToolArgs(raw json.RawMessage, known ...string) (map[string][]byte, *tools.Error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string][]byte{}, nil
	}
	invalid := func(field, problem, fix string) *tools.Error {
		return tools.InvalidRequest([]engine.FieldProblem{{Field: field, Problem: problem, Fix: fix}})
	}
	problem := func(err error) string {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName) {
			return "has a duplicate key (I-JSON forbids it)"
		}
		return "is not valid JSON"
	}
	fixKnown := "Send only these arguments: " + strings.Join(known, ", ") + "."
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '{' {
		return nil, invalid("arguments", "must be a JSON object", fixKnown)
	}
	members := make(map[string][]byte)
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, invalid("arguments", problem(err), "Send the arguments as one JSON object without duplicate keys.")
		}
		key := name.String()
		val, err := dec.ReadValue()
		if err != nil {
			return nil, invalid(fieldName(key, known), problem(err), "Send well-formed JSON (I-JSON, RFC 7493).")
		}
		if !slices.Contains(known, key) {
			return nil, invalid(fieldName(key, known), "is not a known argument", fixKnown)
		}
		members[key] = bytes.Clone(val)
	}
	return members, nil
}

// checkToolArgs fails t unless toolArgs and jsontextToolArgs agree on raw.
func checkToolArgs(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		return // the MCP envelope (encoding/json) hands toolArgs one JSON value
	}
	got, gotErr := toolArgs(raw, "a", "b")
	want, wantErr := jsontextToolArgs(raw, "a", "b")
	if diff := cmp.Diff(wantErr, gotErr); diff != "" {
		t.Fatalf("toolArgs(%q) error (-jsontext +ijson):\n%s", raw, diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("toolArgs(%q) members (-jsontext +ijson):\n%s", raw, diff)
	}
}

var toolArgsSeeds = []string{
	``, ` `, `{}`, ` { } `, `[1]`, `"x"`, `null`, `1`,
	`{"a":1,"b":{"x":[1,2,{"y":null}]}}`,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"zz":1,"zz":2}`,
	`{"a":{"x":1,"x":2}}`, `{"zz":{"x":1,"x":2}}`, `{"a":[{"x":1,"x":2}]}`,
	"{\"a\":\"\xff\"}", "{\"zz\":\"\xff\"}", "{\"\xff\":1}", `{"a":"\ud800"}`, `{"a":"\ud83d\ude00"}`, `{"a":"\x"}`,
	`{"a":1e400,"b":-1e-400}`, `{"a":123456789012345678901234567890}`,
	"{\"zz\":1,\"a\":\"\xff\"}", "{\"a\":\"\xff\",\"zz\":1}", "{\"a\":[\"\xed\xa0\x80\"]}", `{"a":1,"zz":{"x":1,"x":2}}`, `{"a":1,"b":2,"a":3}`,
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"zz":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
}

func TestToolArgsMatchesJSONText(t *testing.T) {
	for _, s := range toolArgsSeeds {
		checkToolArgs(t, []byte(s))
	}
}

func FuzzToolArgs(f *testing.F) {
	for _, s := range toolArgsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkToolArgs)
}
