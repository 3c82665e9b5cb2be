package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestVerifySchemaDir: a schema preloaded with --schema-dir is found by its
// $id. Until the registry registered a folder's files by their $id, any
// .json file in the folder stopped the program at start ("not an absolute
// URI").
func TestVerifySchemaDir(t *testing.T) {
	dir := t.TempDir()
	money := `{"$id":"https://schemas.example.com/money.json","type":"number","minimum":0}`
	if err := os.WriteFile(filepath.Join(dir, "money.json"), []byte(money), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		total string
		want  string
	}{{"12.5", "pass"}, {"-1", "fail"}} {
		body := `{"task_id":"t","expected_schema":{"type":"object","properties":{"total":{"$ref":"https://schemas.example.com/money.json"}}},"submitted_output":{"total":` + tt.total + `}}`
		out, code := runCLI(t, body, "verify", "--data-dir", t.TempDir(), "--schema-dir", dir)
		var answer struct{ Result string }
		if err := json.Unmarshal(out, &answer); err != nil {
			t.Fatalf("total %s: exit %d, answer %q: %v", tt.total, code, out, err)
		}
		if answer.Result != tt.want {
			t.Errorf("total %s: result %q (exit %d), want %q", tt.total, answer.Result, code, tt.want)
		}
	}
}
