package ijson

import "encoding/json"

// AppendMarshalString appends s as a JSON string exactly as json.Marshal
// writes a Go string (HTML escaping on): <, > and & as \u escapes, invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped. Hand-written encoders that
// must produce json.Marshal's bytes (the store's records, a receipt's
// attestation) use it.
func AppendMarshalString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}
