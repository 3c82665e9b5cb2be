package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestSchemaErrorNamesNoKey checks that the field of an invalid schema's 422
// names a plain key by name and any other key by its position, so that an
// error never quotes what the caller wrote (SPEC §6).
func TestSchemaErrorNamesNoKey(t *testing.T) {
	for _, tt := range []struct {
		name, schema, field string
	}{
		{"plain key", `{"properties":{"total":{"type":"strin"}}}`, "expected_schema.properties.total.type"},
		{"key with markup", `{"properties":{"b":{},"<script>x</script>":{"type":"strin"}}}`, "expected_schema.properties.(member #1).type"},
		{"pattern key", `{"patternProperties":{"a":{},"｀ｨ(´∀｀∩":{}}}`, "expected_schema.patternProperties.(member #2)"},
		{"item of allOf", `{"allOf":[{},{"minimum":"x"}]}`, "expected_schema.allOf[1].minimum"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := New(nil)
			req, err := v.DecodeRequest([]byte(`{"task_id":"t","expected_schema":` + tt.schema + `,"submitted_output":1}`))
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.Check(req, "")
			var invalid *InvalidRequestError
			if !errors.As(err, &invalid) || len(invalid.Fields) == 0 {
				t.Fatalf("Check = %v, want an *InvalidRequestError", err)
			}
			if got := invalid.Fields[0].Field; got != tt.field {
				t.Errorf("field = %q, want %q", got, tt.field)
			}
			if strings.Contains(invalid.Error(), "script") || strings.Contains(invalid.Error(), "∀") {
				t.Errorf("the error quotes a key: %v", invalid)
			}
		})
	}
}
