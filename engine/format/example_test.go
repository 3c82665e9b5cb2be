package format_test

import (
	"fmt"

	"github.com/verifier-dev/verifier/engine/format"
)

func ExampleValid() {
	fmt.Println(format.Valid("date", "2024-02-29"))
	fmt.Println(format.Valid("date", "2023-02-29"))
	fmt.Println(format.Valid("idn-hostname", "실례.테스트"))
	fmt.Println(format.Valid("x-custom", "anything"))
	// Output:
	// true
	// false
	// true
	// true
}

func ExampleKnown() {
	fmt.Println(format.Known("email"), format.Known("x-custom"))
	// Output: true false
}
