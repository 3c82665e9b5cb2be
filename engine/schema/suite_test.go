package schema

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// suiteDir is the official JSON Schema Test Suite, vendored in the
// repository's testdata/ (see its SOURCE note).
var suiteDir = filepath.Join("..", "..", "testdata", "json-schema-test-suite")

type suiteCase struct {
	file, group, desc string
	schema, data      any
	valid             bool
}

func (c suiteCase) id() string { return c.file + " | " + c.group + " | " + c.desc }

func readSuiteFile(t *testing.T, path, name string) []suiteCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := decodeJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []suiteCase
	for _, g := range doc.([]any) {
		gm := g.(map[string]any)
		for _, tc := range gm["tests"].([]any) {
			tm := tc.(map[string]any)
			out = append(out, suiteCase{file: name, group: gm["description"].(string), desc: tm["description"].(string),
				schema: gm["schema"], data: tm["data"], valid: tm["valid"].(bool)})
		}
	}
	return out
}

var suiteRegistry = sync.OnceValues(func() (*Registry, error) {
	// the remotes have no $id: each is registered under the URL the suite serves it at
	r := NewRegistry()
	return r, r.addFS(os.DirFS(filepath.Join(suiteDir, "remotes")), func(name string, _ any) string { return "http://localhost:1234/" + name })
})

// runSuiteCase reports "" when the case behaves as the suite expects, else
// what went wrong.
func runSuiteCase(c suiteCase, draft Draft, formatAnnotation bool) string {
	reg, err := suiteRegistry()
	if err != nil {
		return err.Error()
	}
	s, err := Compile(c.schema, &Options{Registry: reg, DefaultDraft: draft, FormatAnnotationOnly: formatAnnotation})
	if err != nil {
		var se *Error
		if errors.As(err, &se) {
			return fmt.Sprintf("compile: invalid schema at %q (%s)", se.Pointer, se.Problem)
		}
		return "compile: " + err.Error()
	}
	res, err := s.Evaluate(c.data)
	if err != nil {
		return "evaluate: " + err.Error()
	}
	if res.Valid != c.valid {
		return fmt.Sprintf("valid = %v, want %v (failures %+v)", res.Valid, c.valid, res.Failures)
	}
	if res.Valid != (res.Passed == res.Total) || res.Valid != (len(res.Failures) == 0) {
		return fmt.Sprintf("accounting inconsistent: valid %v, passed %d of %d, %d failures", res.Valid, res.Passed, res.Total, len(res.Failures))
	}
	return ""
}

func suiteFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no suite files in %s: %v", dir, err)
	}
	slices.Sort(m)
	return m
}

// TestSuite runs the required tests of drafts 2020-12 and 7 and their
// optional format tests; every case must pass.
func TestSuite(t *testing.T) {
	for _, d := range []struct {
		name  string
		draft Draft
	}{{"draft2020-12", Draft2020}, {"draft7", Draft7}} {
		t.Run(d.name, func(t *testing.T) {
			passed, total := 0, 0
			fpassed, ftotal := 0, 0
			dir := filepath.Join(suiteDir, "tests", d.name)
			for _, part := range []string{"", filepath.Join("optional", "format")} {
				for _, path := range suiteFiles(t, filepath.Join(dir, part)) {
					name := filepath.Join(part, filepath.Base(path))
					annotate := d.draft == Draft2020 && name == "format.json"
					for _, c := range readSuiteFile(t, path, name) {
						ok := t.Run(c.id(), func(t *testing.T) {
							if msg := runSuiteCase(c, d.draft, annotate); msg != "" {
								t.Error(msg)
							}
						})
						if part == "" {
							total++
							if ok {
								passed++
							}
						} else {
							ftotal++
							if ok {
								fpassed++
							}
						}
					}
				}
			}
			t.Logf("%s: required %d/%d, optional/format %d/%d", d.name, passed, total, fpassed, ftotal)
		})
	}
}

// TestSuiteOptional runs the other optional files of both drafts (bignum,
// float-overflow, ECMA-262 regex, non-BMP regex, cross-draft, …). Not every
// case is expected to pass: testdata/optional-failures.golden lists the ones
// that fail (with the reason), and the test fails when that list changes in
// either direction. Refresh it with -update.
func TestSuiteOptional(t *testing.T) {
	var failing []string
	for _, d := range []struct {
		name  string
		draft Draft
	}{{"draft2020-12", Draft2020}, {"draft7", Draft7}} {
		passed, total := 0, 0
		files := suiteFiles(t, filepath.Join(suiteDir, "tests", d.name, "optional"))
		for _, path := range files {
			f := filepath.Base(path)
			for _, c := range readSuiteFile(t, path, d.name+"/optional/"+f) {
				total++
				if msg := runSuiteCase(c, d.draft, false); msg != "" {
					// the kind of failure, not its wording
					if i := strings.IndexByte(msg, '('); i > 0 {
						msg = strings.TrimSpace(msg[:i])
					}
					failing = append(failing, c.id()+" => "+msg)
				} else {
					passed++
				}
			}
		}
		t.Logf("%s optional (%d files besides format/): %d/%d", d.name, len(files), passed, total)
	}
	got := strings.Join(failing, "\n") + "\n"
	golden := filepath.Join("testdata", "optional-failures.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden (run with -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("optional suite failures changed; got:\n%s\nwant:\n%s", got, want)
	}
}
