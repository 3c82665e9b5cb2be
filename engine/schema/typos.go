package schema

import (
	"slices"
	"strings"
	"unicode"
)

// KeywordTypo is a member of a schema object that is no keyword of its
// draft but lies within maxTypoDistance edits of one: most likely a
// misspelt keyword, which the specification says to ignore, so that a typo
// silently weakens the schema (`minimun` asserts nothing).
type KeywordTypo struct {
	// Pointer is the JSON Pointer of the schema object in the document ("" for
	// the root).
	Pointer string
	// Keyword is the member as written; Suggestion the closest keyword.
	Keyword, Suggestion string
}

// maxTypoDistance is the largest edit distance between a member and a
// keyword that is reported as a likely typo; for keywords of up to
// shortKeyword bytes (not, type, enum, $ref, …) it is 1, since two edits
// turn many ordinary words into them (unit, notes → not). Further than
// that, a member is taken for the caller's own annotation.
const (
	maxTypoDistance = 2
	shortKeyword    = 4
)

// Keywords of each draft (core, applicators, validation, meta-data, format,
// content): those the two share, with both definitions containers (the
// other draft's is common and harmless), then each draft's own.
var (
	keywordsBoth = []string{
		"$schema", "$id", "$ref", "$comment", "$defs", "definitions",
		"items", "contains", "additionalProperties", "properties", "patternProperties", "dependencies",
		"propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
		"type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
		"maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties",
		"required", "title", "description", "default", "readOnly", "writeOnly", "examples",
		"format", "contentEncoding", "contentMediaType",
	}
	keywords2020 = slices.Concat(keywordsBoth, []string{"$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary",
		"prefixItems", "dependentSchemas", "unevaluatedItems", "unevaluatedProperties", "maxContains", "minContains",
		"dependentRequired", "deprecated", "contentSchema"})
	keywords7 = slices.Concat(keywordsBoth, []string{"additionalItems"})
)

// keywordTypos lists the likely typos among the members of one schema
// object at ptr, sorted by member.
func keywordTypos(obj map[string]any, ptr string, draft Draft) []KeywordTypo {
	known := keywords2020
	if draft == Draft7 {
		known = keywords7
	}
	var out []KeywordTypo
	for member := range obj {
		if strings.HasPrefix(member, "x-") || slices.Contains(known, member) {
			continue
		}
		if kw, ok := closestKeyword(member, known); ok {
			out = append(out, KeywordTypo{Pointer: ptr, Keyword: member, Suggestion: kw})
		}
	}
	slices.SortFunc(out, func(a, b KeywordTypo) int { return strings.Compare(a.Keyword, b.Keyword) })
	return out
}

// ClosestName is the name of known nearest to name by the measure of
// keyword typos (within maxTypoDistance edits, 1 for short names), once
// both are folded to lower case without '_' and '-', so that the camelCase,
// snake_case and kebab-case spellings of a name are one: enforceRules and
// Enforce-Rules are enforce_rules, expectedSchma is expected_schema. It
// serves a request's unknown members, which are refused, with a likely
// meaning.
func ClosestName(name string, known []string) (string, bool) {
	folded := make([]string, len(known))
	for i, k := range known {
		folded[i] = foldName(k)
	}
	kw, ok := closestKeyword(foldName(name), folded)
	if !ok {
		return "", false
	}
	return known[slices.Index(folded, kw)], true
}

// foldName is name in lower case without '_' and '-'.
func foldName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, name)
}

// closestKeyword is the keyword of known nearest to member, when it is
// within its typo distance (maxTypoDistance, 1 for short keywords); among
// equally near keywords, the one that shares the longest prefix with member
// (after any `$`), then the first.
func closestKeyword(member string, known []string) (string, bool) {
	best, bestDist, bestPrefix := "", maxTypoDistance+1, -1
	for _, kw := range known {
		limit := maxTypoDistance
		if len(kw) <= shortKeyword {
			limit = 1
		}
		d := editDistance(member, kw, limit)
		if d > limit {
			continue
		}
		p := commonPrefix(strings.TrimPrefix(member, "$"), strings.TrimPrefix(kw, "$"))
		if d < bestDist || (d == bestDist && p > bestPrefix) {
			best, bestDist, bestPrefix = kw, d, p
		}
	}
	return best, best != ""
}

// editDistance is the edit distance between a and b (by byte) counting an
// insertion, a deletion, a substitution or a swap of two neighbours as one
// edit (optimal string alignment), or limit+1 once it is known to exceed
// limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	// Three rows: the one before the previous serves the swaps.
	rows := [3][]int{make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)}
	for j := range rows[1] {
		rows[1][j] = j
	}
	for i := 1; i <= len(a); i++ {
		// Row k lives in rows[(k+1)%3].
		cur, prev, older := rows[(i+1)%3], rows[i%3], rows[(i+2)%3]
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], older[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
	}
	return min(rows[(len(a)+1)%3][len(b)], limit+1)
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
