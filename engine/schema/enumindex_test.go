package schema

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// enumMembers are the members of the enums under test: every JSON type, and
// numbers that other spellings equal.
var enumMembers = []string{
	`"a"`, `""`, `"é"`, `"e\u0301"`, `"1"`, `null`, `true`, `false`,
	`0`, `1`, `-1`, `2.5`, `1e2`, `-0.0001`, `12345678901234567890123`, `1.5e300`, `5e-324`,
	`[]`, `[1,"a"]`, `{}`, `{"a":1,"b":[null]}`, `{"k":{"x":1.0}}`,
}

// enumProbes are instances looked up in those enums, members or not.
var enumProbes = []string{
	`"a"`, `"b"`, `""`, `"é"`, `"e\u0301"`, `"1"`, `null`, `true`, `false`,
	`0`, `-0`, `0.0`, `1`, `1.0`, `10e-1`, `-1`, `2.50`, `25e-1`, `100`, `1e2`, `1E+2`, `2`,
	`-0.0001`, `-1e-4`, `0.0001`, `12345678901234567890123`, `12345678901234567890124`,
	`1.5e300`, `15e299`, `5e-324`, `4.9e-324`,
	`[]`, `[1,"a"]`, `["a",1]`, `[1.0,"a"]`, `{}`, `{"b":[null],"a":1.00}`, `{"a":1}`, `{"k":{"x":1}}`, `{"k":{"x":2}}`,
}

// TestEnumIndexAgreesWithScan checks that an enum large enough to be
// indexed accepts exactly the values a small, scanned enum with the same
// members accepts, for every JSON type and number spelling.
func TestEnumIndexAgreesWithScan(t *testing.T) {
	var filler []string
	for i := range enumIndexMin {
		filler = append(filler, fmt.Sprintf(`"filler-%d"`, i))
	}
	for _, m := range enumMembers {
		small := `{"enum":[` + m + `]}`
		large := `{"enum":[` + strings.Join(append(append([]string{}, filler...), m), ",") + `]}`
		for _, probe := range enumProbes {
			t.Run(m+" has "+probe, func(t *testing.T) {
				want := evaluate(t, small, probe).Valid
				if got := evaluate(t, large, probe).Valid; got != want {
					t.Errorf("indexed enum with %s: %s valid = %v, scanned enum says %v", m, probe, got, want)
				}
				// in an array: the leaf path of items
				if got := evaluate(t, `{"items":`+large+`}`, "["+probe+"]").Valid; got != want {
					t.Errorf("indexed enum under items with %s: [%s] valid = %v, scanned enum says %v", m, probe, got, want)
				}
			})
		}
	}
}

// TestEnumIndexIsFast evaluates a 50,000-member enum on every item of a
// 100,000-item array: with a scan that is 5e9 comparisons (minutes); with
// the index, well under a second.
func TestEnumIndexIsFast(t *testing.T) {
	for _, tt := range []struct {
		name   string
		member func(i int) string
		item   string
		absent bool // the items are not members: the schema is {"not": enum}
	}{
		{"strings", func(i int) string { return fmt.Sprintf(`"v%d"`, i) }, `"v49999"`, false},
		{"numbers", func(i int) string { return fmt.Sprintf(`%d.5`, i) }, `49999.50`, false},
		{"objects", func(i int) string { return fmt.Sprintf(`{"k":%d}`, i) }, `{"k":49999}`, false},
		{"absent strings", func(i int) string { return fmt.Sprintf(`"v%d"`, i) }, `"nope"`, true},
		{"absent numbers", func(i int) string { return fmt.Sprintf(`%d`, i) }, `0.5`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			members := make([]string, 50_000)
			for i := range members {
				members[i] = tt.member(i)
			}
			enum := `{"enum":[` + strings.Join(members, ",") + `]}`
			if tt.absent {
				enum = `{"not":` + enum + `}`
			}
			s, err := Compile(mustDecode(t, `{"items":`+enum+`}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			inst := mustDecode(t, "["+strings.TrimSuffix(strings.Repeat(tt.item+",", 100_000), ",")+"]")
			start := cpuNow() // CPU time: the machine is shared
			res, err := s.Evaluate(inst)
			took := time.Duration(cpuNow() - start)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Valid {
				t.Errorf("valid = false, want true (%d failures)", len(res.Failures))
			}
			if took > hostileBound() {
				t.Errorf("evaluating took %v, want under %v", took, hostileBound())
			}
		})
	}
}
