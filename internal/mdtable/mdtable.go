// Package mdtable reads the rows of a Markdown table out of a document, so
// tests can hold a document's tables (README.md, /llms.txt, the OpenAPI
// description) to the registry in the code they describe.
//
//	rows, err := mdtable.Find(readme, "code", "status", "retryable", "when")
package mdtable

import (
	"fmt"
	"slices"
	"strings"
)

// Find returns the body rows of the one table in text whose header row has
// exactly the given cells. Cells are trimmed and lose their backticks
// (`invalid_request` reads as invalid_request). It is an error when no
// table, or more than one, has that header, or when a row has another
// number of cells than the header.
func Find(text string, header ...string) ([][]string, error) {
	lines := strings.Split(text, "\n")
	var rows [][]string
	found := 0
	for i := 0; i < len(lines); i++ {
		if !slices.Equal(cells(lines[i]), header) {
			continue
		}
		found++
		if i+1 >= len(lines) || !isDelimiter(lines[i+1], len(header)) {
			return nil, fmt.Errorf("the table headed %v has no delimiter row", header)
		}
		for i += 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
			row := cells(lines[i])
			if len(row) != len(header) {
				return nil, fmt.Errorf("row %q has %d cells, the header %d", lines[i], len(row), len(header))
			}
			rows = append(rows, row)
		}
	}
	if found != 1 {
		return nil, fmt.Errorf("%d tables are headed %v, want 1", found, header)
	}
	return rows, nil
}

// cells splits a table line into its cells; a line that is not a table row
// has none.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil
	}
	parts := strings.Split(line[1:len(line)-1], "|")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.TrimSpace(p), "`", "")
	}
	return parts
}

// isDelimiter reports whether line is the delimiter row of a table of n columns.
func isDelimiter(line string, n int) bool {
	c := cells(line)
	return len(c) == n && !slices.ContainsFunc(c, func(cell string) bool {
		return strings.Trim(cell, ":-") != "" || !strings.Contains(cell, "-")
	})
}
