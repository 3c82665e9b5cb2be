package ecmaregex_test

import (
	"errors"
	"fmt"

	"github.com/verifier-dev/verifier/engine/ecmaregex"
)

func ExampleCompile() {
	re, err := ecmaregex.Compile(`^\p{Lu}\w*$`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(re.MatchString("Hello"), re.MatchString("Héllo"), re.MatchString("Hello\n"))

	_, err = ecmaregex.Compile(`^(?!admin)\w+$`)
	fmt.Println(errors.Is(err, ecmaregex.ErrUnsupported))
	// Output:
	// true false false
	// true
}

func ExampleValid() {
	fmt.Println(ecmaregex.Valid(`(?<=a)b`), ecmaregex.Valid(`\a`), ecmaregex.Valid(`(?P<n>x)`))
	// Output: true false false
}

func ExampleTranslate() {
	src, _ := ecmaregex.Translate(`^\d{3}$`)
	fmt.Println(src)
	// Output: \A[0-9]{3}\z
}
