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
	return eachMember(msg, func(key string, val jsontext.Value) string {
		switch {
		case key == "id":
			if !checkID(val) {
				return msgBadID
			}
		case key == "params" && val.Kind() == '{':
			return eachMember(val, func(key string, val jsontext.Value) string {
				if key != "arguments" && !uniqueBelow(val) {
					return msgDuplicateKey
				}
				return ""
			})
		case !uniqueBelow(val):
			return msgDuplicateKey
		}
		return ""
	})
}

// eachMember calls check with each member of the JSON object obj, in
// order, and returns msgDuplicateKey for a name sent twice, else the first
// message check returns, else "". What is not an object, or not valid JSON,
// passes: the SDK's decoder refuses it.
func eachMember(obj []byte, check func(key string, val jsontext.Value) string) string {
	dec := jsontext.NewDecoder(bytes.NewReader(obj), lenient...)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
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
		if msg := check(key, val); msg != "" {
			return msg
		}
	}
	return ""
}

// uniqueBelow reports whether no object inside val has a key twice.
func uniqueBelow(val jsontext.Value) bool { return val.IsValid(jsontext.AllowInvalidUTF8(true)) }

// lenient are the options of eachMember's decoder: names are counted by
// hand (duplicates below them by uniqueBelow), and invalid UTF-8 is the
// SDK's to refuse.
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
