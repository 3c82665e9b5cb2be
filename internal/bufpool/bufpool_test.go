package bufpool

import "testing"

func TestPool(t *testing.T) {
	for _, tt := range []struct {
		name string
		size int
		kept bool
	}{
		{"within the limit", 16, true},
		{"above the limit", 17, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := New(16)
			reused := false
			// sync.Pool may drop an item (the collector, or at random under
			// the race detector), so a kept buffer need only come back once
			// in a hundred tries, and a dropped one must never.
			for range 100 {
				b := p.Get()
				*b = append((*b)[:0], make([]byte, tt.size)...)
				p.Put(b)
				got := p.Get()
				if len(*got) != 0 {
					t.Fatalf("Get() after Put has length %d, want 0", len(*got))
				}
				if cap(*got) > 16 {
					t.Fatalf("Get() returned a buffer of capacity %d, above the limit 16", cap(*got))
				}
				if got == b {
					reused = true
				}
				p.Put(got)
			}
			if reused != tt.kept {
				t.Errorf("a buffer of %d bytes came back: %v, want %v", tt.size, reused, tt.kept)
			}
		})
	}
}
