package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/verifier-dev/verifier/engine/schema"
)

func decode(s string) any {
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		panic(err)
	}
	return v
}

func ExampleCompile() {
	s, err := schema.Compile(decode(`{
		"type": "object",
		"required": ["sku", "qty"],
		"properties": {
			"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{5}$"},
			"qty": {"type": "integer", "minimum": 1}
		},
		"additionalProperties": false
	}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := s.Evaluate(decode(`{"sku": "ABC-12345", "qty": 0, "note": "x"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("valid=%v passed=%d total=%d\n", res.Valid, res.Passed, res.Total)
	for _, f := range res.Failures {
		fmt.Println(f.InstancePath, f.Keyword, "-", f.Sentence())
	}
	// Output:
	// valid=false passed=5 total=7
	// /qty minimum - The value at /qty must be at least 1, but it is number 0.
	//  false - The root value has properties the schema does not declare: note; remove them.
}

func ExampleCompile_invalidSchema() {
	_, err := schema.Compile(decode(`{"properties": {"total": {"type": "numbr"}}}`), nil)
	if se, ok := err.(*schema.Error); ok {
		fmt.Println(se.Pointer)
		fmt.Println(se.Fix)
	}
	// Output:
	// /properties/total/type
	// use one of "array", "boolean", "integer", "null", "number", "object", "string", or an array of them
}

func ExampleRegistry() {
	reg := schema.NewRegistry()
	if err := reg.Add("https://schemas.example.com/money.json", decode(`{"type": "number", "minimum": 0}`)); err != nil {
		fmt.Println(err)
		return
	}
	s, err := schema.Compile(decode(`{"items": {"$ref": "https://schemas.example.com/money.json"}}`), &schema.Options{Registry: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := s.Evaluate(decode(`[1.5, -2]`))
	fmt.Println(res.Valid, res.Failures[0].InstancePath)
	// Output:
	// false /1
}
