package mcpserver

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// maxExactID is the largest integer id answered exactly: the SDK decodes a
// numeric id as a float64 and answers it as an int64, so an integer past
// 2^53−1 (and any fraction) came back as another number, and the answer
// named another request. 2^53−1 is also the largest integer a JavaScript
// client (most MCP clients) holds exactly.
const maxExactID = 1<<53 - 1

// msgBadID and msgDuplicateKey are the refusals of checkEnvelope.
const (
	msgBadID = "Invalid Request: \"id\" must be a string or an integer from -9007199254740991 to 9007199254740991, " +
		"written without a fraction or an exponent (MCP ids are strings or integers; the answer carries the id exactly as sent)."
	msgDuplicateKey = "Invalid Request: the message has a duplicate key (I-JSON, RFC 7493, forbids it): " +
		"send each member of the message, and of its \"params\", once."
)

// checkEnvelope checks what the SDK's decoder lets through in a JSON-RPC
// message (one valid JSON object) that would make its answer differ from
// what was sent: an id it cannot echo exactly (checkID), and a key sent
// twice in the envelope, in params or anywhere below them but the tool
// arguments (the SDK keeps the last; another reader may keep the first —
// a parser differential). Tool arguments are left to toolArgs, which
// refuses their duplicates with a field-level 422. It returns "" for a
// message to pass on, else the JSON-RPC Invalid Request message to answer
// with (a null id: the id itself may be what is wrong).
func checkEnvelope(msg []byte) string {
	dec := jsontext.NewDecoder(bytes.NewReader(msg), lenient...)
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '{' {
		return "" // not an object: the SDK's decoder refuses it
	}
	names := map[string]bool{}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		key := name.String()
		if names[key] {
			return msgDuplicateKey
		}
		names[key] = true
		val, err := dec.ReadValue()
		if err != nil {
			return ""
		}
		switch {
		case key == "id":
			if !checkID(val) {
				return msgBadID
			}
		case key == "params" && val.Kind() == '{':
			if !paramsUnique(val) {
				return msgDuplicateKey
			}
		case !val.IsValid(jsontext.AllowInvalidUTF8(true)): // a duplicate key below this member
			return msgDuplicateKey
		}
	}
	return ""
}

// paramsUnique reports whether the params object has no key twice, in
// itself or in any of its members but "arguments".
func paramsUnique(params jsontext.Value) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(params), lenient...)
	if _, err := dec.ReadToken(); err != nil {
		return true // cannot happen for a valid object; the SDK decides
	}
	names := map[string]bool{}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return true
		}
		key := name.String()
		if names[key] {
			return false
		}
		names[key] = true
		val, err := dec.ReadValue()
		if err != nil {
			return true
		}
		if key != "arguments" && !val.IsValid(jsontext.AllowInvalidUTF8(true)) {
			return false
		}
	}
	return true
}

// lenient are the options of the decoders of checkEnvelope: names are
// counted by hand (duplicates below them by IsValid), and invalid UTF-8 is
// the SDK's to refuse.
var lenient = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// checkID reports whether a JSON-RPC id can be answered exactly as sent: a
// string of valid UTF-8, null (the SDK's own refusals), or an integer literal without a
// fraction, an exponent or a negative zero, of magnitude at most
// maxExactID.
func checkID(val jsontext.Value) bool {
	switch val.Kind() {
	case '"':
		return val.IsValid() // the SDK reads invalid UTF-8 as U+FFFD: another id
	case 'n':
		return true
	case '0':
	default:
		return false
	}
	lit := string(val)
	digits := lit
	if digits[0] == '-' {
		digits = digits[1:]
		if digits == "0" {
			return false // -0 would come back as 0
		}
	}
	if len(digits) == 0 || len(digits) > 16 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false // a fraction or an exponent
		}
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	return err == nil && n >= -maxExactID && n <= maxExactID
}
