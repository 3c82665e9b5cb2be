package ijson

import (
	"bytes"
	"encoding/json"
)

// AppendMarshalString appends s as a JSON string exactly as json.Marshal
// writes a Go string (HTML escaping on): <, > and & as \u escapes, invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped. Hand-written encoders that
// must produce json.Marshal's bytes (the store's records, a receipt's
// attestation) use it.
func AppendMarshalString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}

// Marshal encodes v as json.Marshal does but without HTML escaping (<, >
// and & are written as they are): compact JSON, the form every answer and
// error body of the service is written in.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
