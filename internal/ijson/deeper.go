package ijson

// Deeper reports whether data, read as JSON text from its start, opens
// arrays and objects more than limit levels deep at once. It looks only at
// brackets outside strings and stops at the first level past limit, so it
// answers in one pass, whatever else is wrong with data (a syntax error
// after that point, an end before the brackets close). Decoders that give
// up on deep nesting with a bare syntax error (jsontext and encoding/json
// at 10,000 levels) can so be told apart from malformed JSON.
func Deeper(data []byte, limit int) bool {
	depth := 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte cannot end the string
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > limit {
				return true
			}
		case ']', '}':
			depth--
			if depth <= 0 {
				return false // the value opened first has closed
			}
		}
	}
	return false
}
