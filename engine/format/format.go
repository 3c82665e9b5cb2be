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

// checker returns the check of a known format, or nil.
func checker(name string) func(string) bool {
	switch name {
	case "date":
		return validDate
	case "time":
		return validTime
	case "date-time":
		return validDateTime
	case "duration":
		return validDuration
	case "email":
		return func(s string) bool { return validEmail(s, false) }
	case "idn-email":
		return func(s string) bool { return validEmail(s, true) }
	case "hostname":
		return validHostname
	case "idn-hostname":
		return validIDNHostname
	case "ipv4":
		return validIPv4
	case "ipv6":
		return validIPv6
	case "uri":
		return func(s string) bool { return validURI(s, false, false) }
	case "uri-reference":
		return func(s string) bool { return validURI(s, false, true) }
	case "iri":
		return func(s string) bool { return validURI(s, true, false) }
	case "iri-reference":
		return func(s string) bool { return validURI(s, true, true) }
	case "uri-template":
		return validURITemplate
	case "uuid":
		return validUUID
	case "json-pointer":
		return validJSONPointer
	case "relative-json-pointer":
		return validRelativeJSONPointer
	case "regex":
		return ecmaregex.Valid
	}
	return nil
}

// Names lists the formats this package asserts.
func Names() []string {
	return []string{
		"date", "date-time", "duration", "email", "hostname", "idn-email", "idn-hostname",
		"ipv4", "ipv6", "iri", "iri-reference", "json-pointer", "regex", "relative-json-pointer",
		"time", "uri", "uri-reference", "uri-template", "uuid",
	}
}

// Known reports whether name is a format this package asserts. Unknown
// formats are annotations only.
func Known(name string) bool { return checker(name) != nil }

// Valid reports whether s is a valid instance of the named format. It returns
// true for formats that are not Known.
func Valid(name, s string) bool {
	check := checker(name)
	return check == nil || check(s)
}
