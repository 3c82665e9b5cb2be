package engine

import "github.com/verifier-dev/verifier/engine/schema"

// Defaults for Options' zero values.
const (
	DefaultCacheSize = 256
	DefaultListCap   = 50
	DefaultMaxDepth  = 128
)

// Options configures a Verifier. The zero value means the documented
// defaults.
type Options struct {
	// CacheSize is how many compiled schemas are kept, keyed by schema hash;
	// DefaultCacheSize when zero, no cache when negative.
	CacheSize int
	// ListCap caps errors, errors_detail, flags and hints; DefaultListCap when zero.
	ListCap int
	// MaxDepth is the deepest nesting accepted in the request body;
	// DefaultMaxDepth when zero.
	MaxDepth int
	// MaxRules and MaxBounds cap the rules list and the bounds object.
	MaxRules, MaxBounds int
	// Schema holds the schema compiler's limits and registry.
	Schema schema.Options
}

func (o *Options) maxDepth() int  { return orDefault(o.MaxDepth, DefaultMaxDepth) }
func (o *Options) maxRules() int  { return orDefault(o.MaxRules, DefaultMaxRules) }
func (o *Options) maxBounds() int { return orDefault(o.MaxBounds, DefaultMaxBounds) }
func (o *Options) listCap() int   { return orDefault(o.ListCap, DefaultListCap) }

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
