package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/internal/mdtable"
	"github.com/verifier-dev/verifier/tools/rest"
)

// readme returns README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeErrorTable: README.md's error table has one row per code of the
// error registry (rest.ErrorCodes), no other, each with its HTTP status and
// whether it is retryable.
func TestReadmeErrorTable(t *testing.T) {
	rows, err := mdtable.Find(readme(t), "code", "HTTP", "retryable", "when")
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	var got, want [][]string
	for _, r := range rows {
		retryable := map[string]string{"yes": "true", "no": "false"}[r[2]]
		if retryable == "" {
			t.Errorf("README.md error table, %s: retryable is %q, want yes or no", r[0], r[2])
		}
		got = append(got, []string{r[0], r[1], retryable})
	}
	for _, c := range rest.ErrorCodes() {
		want = append(want, []string{c.Code, strconv.Itoa(c.Status), strconv.FormatBool(c.Retryable)})
	}
	byCode := func(a, b []string) int { return strings.Compare(a[0], b[0]) }
	slices.SortFunc(got, byCode)
	slices.SortFunc(want, byCode)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("README.md's error table differs from rest.ErrorCodes() (code, HTTP, retryable; -registry +README):\n%s", diff)
	}
}
