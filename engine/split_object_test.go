package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/internal/ijson"
)

// splitObjectJSON is splitObject as it was written over encoding/json's
// tokens, the reference the ijson version is held to: the same names and
// members, or the same problem on the same field.
func splitObjectJSON(body []byte, maxDepth int, raw *requestMembers) ([]string, *FieldProblem) {
	err := ijson.Check(body, &ijson.Options{MaxDepth: maxDepth + 1})
	var ie *ijson.Error
	errors.As(err, &ie)
	text := bytes.TrimLeft(body, jsonSpace)
	switch {
	case len(text) == 0 || text[0] != '{':
		return nil, notObject(body, ie, len(body)-len(text), maxDepth)
	case ie == nil || (ie.Kind == ijson.ErrNumber || ie.Kind == ijson.ErrDepth) && json.Valid(body):
		ie = nil // the body splits
	case ie.Kind == ijson.ErrTrailing:
		return nil, bodyError("has data after the JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	_, err = dec.Token() // the opening brace
	var names []string
	seen := make(map[string]bool)
	for err == nil && dec.More() {
		var tok json.Token
		if tok, err = dec.Token(); err != nil || passed(dec.InputOffset(), ie) {
			break // the fault is not in a member's value
		}
		name, _ := tok.(string)
		var val json.RawMessage
		err = dec.Decode(&val)
		if ie != nil && (err != nil || passed(dec.InputOffset(), ie)) {
			return nil, faultError(body, ie, memberName("", name, len(names)), maxDepth)
		}
		if seen[name] {
			return nil, bodyError(duplicateKey)
		}
		seen[name] = true
		if i := slices.Index(topLevelFields, name); i >= 0 {
			raw[i] = val
		}
		names = append(names, name)
	}
	switch {
	case ie != nil:
		return nil, faultError(body, ie, "body", maxDepth)
	case err != nil: // json.Valid accepted the body: cannot happen
		return nil, bodyError("is not valid JSON")
	}
	return names, nil
}

// checkSplitObject fails t unless splitObject and splitObjectJSON agree on
// body at both depth limits.
func checkSplitObject(t *testing.T, body []byte) {
	t.Helper()
	for _, depth := range []int{5, ijson.DefaultMaxDepth} {
		var gotRaw, wantRaw requestMembers
		gotNames, gotErr := splitObject(body, depth, &gotRaw)
		wantNames, wantErr := splitObjectJSON(body, depth, &wantRaw)
		if diff := cmp.Diff(wantErr, gotErr); diff != "" {
			t.Fatalf("splitObject(%q, %d) problem (-encoding/json +ijson):\n%s", body, depth, diff)
		}
		if wantErr != nil {
			continue
		}
		if diff := cmp.Diff(wantNames, gotNames); diff != "" {
			t.Fatalf("splitObject(%q, %d) names (-encoding/json +ijson):\n%s", body, depth, diff)
		}
		if diff := cmp.Diff(wantRaw, gotRaw); diff != "" {
			t.Fatalf("splitObject(%q, %d) members (-encoding/json +ijson):\n%s", body, depth, diff)
		}
	}
}

// splitSeeds are malformed bodies of every kind splitObject tells apart.
var splitSeeds = []string{
	``, ` `, `[]`, `1`, `x`, `"s"`, `{`, `{"task_id"`, `{"task_id":`, `{"task_id":"t`, `{"task_id":"t"`, `{"task_id":"t",`,
	`{"task_id":1x}`, `{"task_id" 1}`, `{1:2}`, `{"a":1 "b":2}`, `{"a":1}x`, `{"a":1} {}`, `{"a":[1,]}`,
	`{"task_id":"t","task_id":"u"}`, `{"a":1,"\u0061":2}`,
	`{"submitted_output":{"x":1,"x":2},"task_id":"t"}`,
	`{"submitted_output":1e400,"expected_schema":{},"task_id":1e999}`,
	`{"submitted_output":1e400,"task_id":"\xff"}`, "{\"submitted_output\":1e400,\"task_id\":\"\xff\"}",
	"{\"submitted_output\":1e400,\"\xff\":1,\"\xfe\":2}", `{"submitted_output":1e400,"\ud800":1,"\udc00":2}`,
	"{\"task_id\":\"\xff\"}", "{\"\xff\":1}", `{"task_id":"\ud800"}`, `{"task_id":"\ud800\u0041"}`, `{"task_id":"\x"}`,
	`{"submitted_output":[[[[[[[1]]]]]]],"task_id":"t"}`, `{"submitted_output":[[[[[[[1]]]]]]],"task_id":"t","x":{"a":1,"a":2}}`,
	`{"submitted_output":[[[[[[[1]]]]]]]`, `{"submitted_output":[[[[[[[1]]]]]]], "task_id":"t" x`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"a":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `,"b":1e400}`,
	`{"submitted_output":123456789012345678901234567890,"rules":[{"type":"x"}],"zz":1}`,
}

func TestSplitObjectMatchesEncodingJSON(t *testing.T) {
	for _, s := range splitSeeds {
		checkSplitObject(t, []byte(s))
	}
	for _, s := range fastPathSeeds(t) {
		checkSplitObject(t, s)
	}
}

func FuzzSplitObject(f *testing.F) {
	for _, s := range splitSeeds {
		f.Add([]byte(s))
	}
	for _, s := range fastPathSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkSplitObject)
}
