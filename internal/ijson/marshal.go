package ijson

import (
	"bytes"
	"encoding/json"
)

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
