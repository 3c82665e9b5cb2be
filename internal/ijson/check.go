package ijson

// The check-only scan below walks a value exactly as fastDecoder.value
// decodes it, with the same checks and the same give-ups, but builds no Go
// values: a request whose schema is already compiled never needs the schema
// as maps, only the assurance that it is I-JSON (FuzzCheckMatchesDecode
// holds the two to the same answer).

// linearNames is how many member names of one object the scan compares
// pairwise before it switches to a set.
const linearNames = 16

// checkValue steps over the value at pos at the given depth; it is false
// wherever value would give up.
func (d *fastDecoder) checkValue(depth int) bool {
	if d.pos >= len(d.in) {
		return false
	}
	switch c := d.in[d.pos]; {
	case c == '{':
		return depth < d.maxDepth && d.checkObject(depth)
	case c == '[':
		return depth < d.maxDepth && d.checkArray(depth)
	case c == '"':
		return d.checkString()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.checkNumber()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	}
	return false
}

// checkString steps over the string at pos, checking it as str decodes it
// but building nothing.
func (d *fastDecoder) checkString() bool {
	raw, plain, ok := d.plainStr()
	if !ok || plain {
		return ok
	}
	_, ok = d.escapedStr(len(d.in) - len(raw))
	return ok
}

// checkObject steps over the object at pos, refusing a duplicate name. The
// names of the objects being scanned stack up in d.names.
func (d *fastDecoder) checkObject(depth int) bool {
	d.pos++
	d.skipSpace()
	if d.pos < len(d.in) && d.in[d.pos] == '}' {
		d.pos++
		return true
	}
	base := len(d.names)
	ok := d.checkMembers(depth, base)
	d.names = d.names[:base]
	return ok
}

// checkMembers steps over the members of the object checkObject is in,
// the names before them from d.names[base:] on.
func (d *fastDecoder) checkMembers(depth, base int) bool {
	var set map[string]struct{}
	for {
		d.skipSpace()
		if d.pos >= len(d.in) || d.in[d.pos] != '"' {
			return false
		}
		name, ok := d.str()
		if !ok {
			return false
		}
		switch {
		case set != nil:
			if _, dup := set[name]; dup {
				return false
			}
			set[name] = struct{}{}
		case len(d.names)-base < linearNames:
			for _, prev := range d.names[base:] {
				if prev == name {
					return false
				}
			}
			d.names = append(d.names, name)
		default:
			set = make(map[string]struct{}, 2*linearNames)
			for _, prev := range d.names[base:] {
				set[prev] = struct{}{}
			}
			if _, dup := set[name]; dup {
				return false
			}
			set[name] = struct{}{}
		}
		d.skipSpace()
		if d.pos >= len(d.in) || d.in[d.pos] != ':' {
			return false
		}
		d.pos++
		d.skipSpace()
		if !d.checkValue(depth + 1) {
			return false
		}
		more, ok := d.separator('}')
		if !ok {
			return false
		}
		if !more {
			return true
		}
	}
}

// checkArray steps over the array at pos.
func (d *fastDecoder) checkArray(depth int) bool {
	d.pos++
	d.skipSpace()
	if d.pos < len(d.in) && d.in[d.pos] == ']' {
		d.pos++
		return true
	}
	for {
		d.skipSpace()
		if !d.checkValue(depth + 1) {
			return false
		}
		more, ok := d.separator(']')
		if !ok {
			return false
		}
		if !more {
			return true
		}
	}
}
