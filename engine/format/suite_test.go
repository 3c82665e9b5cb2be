package format

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// suiteDir is the JSON Schema Test Suite's tests, vendored in the
// repository's testdata/ (see its SOURCE note).
var suiteDir = filepath.Join("..", "..", "testdata", "json-schema-test-suite", "tests")

// TestSuiteFormats runs every string case of the suite's optional/format
// folders (drafts 2020-12 and 7) through Valid. Non-string data passes
// format by definition and is skipped.
func TestSuiteFormats(t *testing.T) {
	type tally struct{ passed, total int }
	perFormat := map[string]*tally{}
	for _, draft := range []string{"draft2020-12", "draft7"} {
		dir := filepath.Join(suiteDir, draft, "optional", "format")
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no suite files in %s (err %v)", dir, err)
		}
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("reading the suite: %v", err)
			}
			var groups []struct {
				Description string `json:"description"`
				Schema      struct {
					Format string `json:"format"`
				} `json:"schema"`
				Tests []struct {
					Description string `json:"description"`
					Data        any    `json:"data"`
					Valid       bool   `json:"valid"`
				} `json:"tests"`
			}
			if err := json.Unmarshal(raw, &groups); err != nil {
				t.Fatalf("decoding %s: %v", file, err)
			}
			for _, g := range groups {
				if g.Schema.Format == "" {
					t.Fatalf("%s: group %q has no format", file, g.Description)
				}
				for _, tc := range g.Tests {
					s, ok := tc.Data.(string)
					if !ok {
						continue
					}
					tl := perFormat[g.Schema.Format]
					if tl == nil {
						tl = &tally{}
						perFormat[g.Schema.Format] = tl
					}
					tl.total++
					if got := Valid(g.Schema.Format, s); got != tc.Valid {
						t.Errorf("%s/%s: %s: Valid(%q, %q) = %v, want %v",
							draft, filepath.Base(file), tc.Description, g.Schema.Format, s, got, tc.Valid)
						continue
					}
					tl.passed++
				}
			}
		}
	}
	var names []string
	passed, total := 0, 0
	for name, tl := range perFormat {
		names = append(names, name)
		passed += tl.passed
		total += tl.total
	}
	slices.Sort(names)
	for _, name := range names {
		tl := perFormat[name]
		t.Logf("%-22s %3d/%3d", name, tl.passed, tl.total)
	}
	t.Logf("%-22s %3d/%3d (%s)", "all formats", passed, total, percent(passed, total))
	for name := range checkers {
		if perFormat[name] == nil {
			t.Errorf("format %q is asserted but the suite never tested it", name)
		}
	}
}

func percent(a, b int) string { return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b)) }
