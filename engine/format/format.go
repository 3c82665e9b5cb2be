// Package format checks the string formats of JSON Schema's format keyword
// as assertions: the dates and times of RFC 3339, durations, e-mail
// addresses and host names (with IDNA2008 for their internationalized
// forms), IP addresses, URIs, IRIs and URI templates, UUIDs, JSON pointers
// and ECMA-262 regular expressions.
//
// Each check follows the grammar its RFC gives, as the JSON Schema test
// suite reads it. Unknown format names are annotations only, so Valid
// returns true for them; Known tells the two apart.
//
//	format.Valid("date", "2024-02-30")           // false: no such day
//	format.Valid("idn-hostname", "실례.테스트")   // true
//	format.Valid("x-custom", "anything")        // true: not a known format
package format

import "github.com/verifier-dev/verifier/engine/ecmaregex"

// checkers holds the check of every format this package asserts.
var checkers = map[string]func(string) bool{
	"date":                  validDate,
	"time":                  validTime,
	"date-time":             validDateTime,
	"duration":              validDuration,
	"email":                 func(s string) bool { return validEmail(s, false) },
	"idn-email":             func(s string) bool { return validEmail(s, true) },
	"hostname":              validHostname,
	"idn-hostname":          validIDNHostname,
	"ipv4":                  validIPv4,
	"ipv6":                  validIPv6,
	"uri":                   func(s string) bool { return validURI(s, false, false) },
	"uri-reference":         func(s string) bool { return validURI(s, false, true) },
	"iri":                   func(s string) bool { return validURI(s, true, false) },
	"iri-reference":         func(s string) bool { return validURI(s, true, true) },
	"uri-template":          validURITemplate,
	"uuid":                  validUUID,
	"json-pointer":          validJSONPointer,
	"relative-json-pointer": validRelativeJSONPointer,
	"regex":                 ecmaregex.Valid,
}

// Known reports whether name is a format this package asserts. Unknown
// formats are annotations only.
func Known(name string) bool {
	_, ok := checkers[name]
	return ok
}

// Valid reports whether s is a valid instance of the named format. It returns
// true for formats that are not Known.
func Valid(name, s string) bool {
	check, ok := checkers[name]
	return !ok || check(s)
}
