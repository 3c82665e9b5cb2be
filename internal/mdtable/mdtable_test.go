package mdtable

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFind(t *testing.T) {
	doc := "# Title\n\n| code | status |\n|---|:--:|\n| `a` | 1 |\n|b|2|\n\nafter\n\n| other | table |\n|---|---|\n| x | y |\n"
	for _, tt := range []struct {
		name    string
		text    string
		header  []string
		want    [][]string
		wantErr bool
	}{
		{"found", doc, []string{"code", "status"}, [][]string{{"a", "1"}, {"b", "2"}}, false},
		{"the other table", doc, []string{"other", "table"}, [][]string{{"x", "y"}}, false},
		{"no such header", doc, []string{"code"}, nil, true},
		{"two tables with the header", doc + "\n| code | status |\n|---|---|\n", []string{"code", "status"}, nil, true},
		{"no delimiter row", "| code | status |\n| a | 1 |\n", []string{"code", "status"}, nil, true},
		{"short row", "| code | status |\n|---|---|\n| a |\n", []string{"code", "status"}, nil, true},
		{"empty table", "| code | status |\n|---|---|\n\ntext\n", []string{"code", "status"}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(tt.text, tt.header...)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Find(%v) error = %v, want error %t", tt.header, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Find(%v) rows (-want +got):\n%s", tt.header, diff)
			}
		})
	}
}
