package ijson

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDecodeEscape(t *testing.T) {
	tests := []struct {
		in   string
		want rune
		next int
		ok   bool
	}{
		{`\"`, '"', 2, true},
		{`\\`, '\\', 2, true},
		{`\/`, '/', 2, true},
		{`\n`, '\n', 2, true},
		{`\t`, '\t', 2, true},
		{`\u00e9`, 'é', 6, true},
		{`\u00E9x`, 'é', 6, true},
		{`\ud83d\ude00`, '😀', 12, true},
		{`\ud83d`, 0, 0, false},       // lone high surrogate
		{`\ude00`, 0, 0, false},       // lone low surrogate
		{`\ude00\ud83d`, 0, 0, false}, // misordered pair
		{`\ud83d\u0041`, 0, 0, false}, // high surrogate then a non-surrogate
		{`\x41`, 0, 0, false},         // not a JSON escape
		{`\u12`, 0, 0, false},         // short
		{`\u12g4`, 0, 0, false},       // not hex
		{`\`, 0, 0, false},            // nothing after the backslash
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, next, ok := decodeEscape([]byte(tt.in), 0)
			if ok != tt.ok || (ok && (r != tt.want || next != tt.next)) {
				t.Errorf("decodeEscape(%s) = %q, %d, %v; want %q, %d, %v", tt.in, r, next, ok, tt.want, tt.next, tt.ok)
			}
		})
	}
}

// FuzzDecodeEscape checks Decode against encoding/json on every escape it accepts.
func FuzzDecodeEscape(f *testing.F) {
	for _, s := range []string{`\n`, `\u0041`, `\ud83d\ude00`, `\ud800`, `\q`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || in[0] != '\\' {
			return
		}
		r, next, ok := decodeEscape(in, 0)
		if !ok {
			return
		}
		var s string
		if err := json.Unmarshal(append(append([]byte{'"'}, in[:next]...), '"'), &s); err != nil {
			t.Fatalf("Decode accepted %q, encoding/json refuses it: %v", in[:next], err)
		}
		if s != string(r) {
			t.Fatalf("decodeEscape(%q) = %q, encoding/json reads %q", in[:next], r, s)
		}
	})
}

func TestPlainRun(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 20; pos++ {
			in := bytes.Repeat([]byte{'a'}, 20)
			in[pos] = byte(c)
			want := pos
			if c >= 0x20 && c < 0x80 && c != '"' && c != '\\' {
				want = len(in)
			}
			if got := plainRun(in, 0); got != want {
				t.Fatalf("plainRun with byte %#x at %d = %d, want %d", c, pos, got, want)
			}
			if got := plainRun(in, pos); got != want {
				t.Fatalf("plainRun from %d with byte %#x there = %d, want %d", pos, c, got, want)
			}
		}
	}
}
