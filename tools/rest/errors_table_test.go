package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/internal/mdtable"
)

// registryRows is ErrorCodes as table rows of code, status and retryable.
func registryRows() [][]string {
	var rows [][]string
	for _, c := range ErrorCodes() {
		rows = append(rows, []string{c.Code, strconv.Itoa(c.Status), strconv.FormatBool(c.Retryable)})
	}
	return rows
}

// compareErrorTable reports how rows (code, HTTP status, retryable first)
// differ from the error registry: a missing or extra code, or another
// status or retryable, as a diff.
func compareErrorTable(t *testing.T, where string, rows [][]string) {
	t.Helper()
	var got [][]string
	for _, r := range rows {
		got = append(got, r[:3])
	}
	want := registryRows()
	byCode := func(a, b []string) int { return strings.Compare(a[0], b[0]) }
	slices.SortFunc(got, byCode)
	slices.SortFunc(want, byCode)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the error table of %s differs from ErrorCodes() (-registry +%s):\n%s", where, where, diff)
	}
}

// TestErrorTablesMatchRegistry: the error tables /llms.txt and
// /openapi.json publish have one row per code of ErrorCodes, no other, with
// its status and retryable.
func TestErrorTablesMatchRegistry(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	_, llms := f.do(t, http.MethodGet, "/llms.txt", nil, nil)
	// "## Errors" and, right after it, "## Payment errors": together the
	// registry, the payment codes in the second only.
	_, errorsPart, found := strings.Cut(string(llms), "\n## Errors\n")
	if !found {
		t.Fatal("llms.txt has no Errors section")
	}
	errorsPart, paymentPart, found := strings.Cut(errorsPart, "\n## ")
	if !found || !strings.HasPrefix(paymentPart, "Payment errors\n") {
		t.Fatalf("the section after Errors in llms.txt is not Payment errors: %.40q", paymentPart)
	}
	paymentPart, _, _ = strings.Cut(paymentPart, "\n## ")
	var rows [][]string
	for _, part := range []struct {
		name, text string
		payment    bool
	}{{"Errors", errorsPart, false}, {"Payment errors", paymentPart, true}} {
		sectionRows, err := mdtable.Find(part.text, "code", "HTTP", "retryable", "meaning")
		if err != nil {
			t.Fatalf("llms.txt %s: %v", part.name, err)
		}
		for _, row := range sectionRows {
			if IsPaymentCode(row[0]) != part.payment {
				t.Errorf("llms.txt lists %s under %s", row[0], part.name)
			}
		}
		rows = append(rows, sectionRows...)
	}
	compareErrorTable(t, "llms.txt", rows)

	_, doc := openAPIDoc(t, f)
	description := doc["info"].(map[string]any)["description"].(string)
	rows, err := mdtable.Find(description, "code", "HTTP", "retryable", "meaning")
	if err != nil {
		t.Fatalf("openapi.json info.description: %v", err)
	}
	compareErrorTable(t, "openapi.json", rows)
}

// TestOpenAPIErrorExamplesMatchRegistry: every error example in
// /openapi.json carries its code's status and retryable.
func TestOpenAPIErrorExamplesMatchRegistry(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	raw, _ := openAPIDoc(t, f)
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	registry := map[string]ErrorCode{}
	for _, c := range ErrorCodes() {
		registry[c.Code] = c
	}
	seen := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			code, isCode := x["code"].(string)
			status, hasStatus := x["status"].(float64)
			retryable, hasRetryable := x["retryable"].(bool)
			if isCode && hasStatus && hasRetryable {
				seen++
				c, known := registry[code]
				switch {
				case !known:
					t.Errorf("%s: example code %q is not in ErrorCodes()", path, code)
				case int(status) != c.Status || retryable != c.Retryable:
					t.Errorf("%s: example %s has status %v retryable %v, the registry %d %v", path, code, status, retryable, c.Status, c.Retryable)
				}
			}
			for k, e := range x {
				walk(path+"/"+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s/%d", path, i), e)
			}
		}
	}
	walk("", doc)
	if seen == 0 {
		t.Fatal("found no error example in /openapi.json")
	}
}
