// Package schema compiles JSON Schema documents (draft 2020-12 by default,
// draft-07 when $schema names it) and evaluates decoded JSON against them,
// counting every check the way the product reports schema compliance.
//
// A check is one assertion keyword evaluated at one instance location that
// must hold (type, required, minimum, …). Applicators (properties, items,
// allOf, $ref, …) are not checks themselves; the assertions they reach are.
// anyOf, oneOf, not, contains and the if condition count as one check each at
// their location, decided by their branches, whose own assertions are not
// counted. A false schema reached through an applicator counts one check per
// location it guards; additionalProperties, unevaluatedProperties, items,
// additionalItems and unevaluatedItems set to false count one check per
// object or array. propertyNames counts one check per object, decided by
// evaluating every property name. The if condition never fails: its check
// holds and selects then or else, whose assertions count normally.
//
// Compile never fetches anything: a $ref that leaves the document must name
// an embedded meta-schema or a schema preloaded into a Registry.
//
//	var doc, inst any
//	// decode both with json.Decoder.UseNumber
//	s, err := schema.Compile(doc, nil)
//	if err != nil { /* *schema.Error: where in the schema and how to fix it */ }
//	res, err := s.Evaluate(inst)
//	fmt.Println(res.Valid, res.Passed, res.Total)
package schema

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Defaults used when an Options field is zero.
const (
	DefaultMaxNodes = 100_000
	DefaultMaxSteps = 1_000_000
	// DefaultMaxPatternSize and DefaultMaxPatternsSize bound the compiled
	// size (ecmaregex.Program.Size units, at most ecmaregex.InstBytes of
	// heap each) of one pattern and of all of a schema's patterns: 640 KiB
	// and 6.25 MiB of heap, and about 10 and 100 ms of compiling.
	DefaultMaxPatternSize  = 10_000
	DefaultMaxPatternsSize = 100_000
)

// maxSchemaDepth bounds the nesting of a schema document, checked before
// anything recurses over it.
const maxSchemaDepth = 128

// maxEvalDepth bounds the recursion of one evaluation (schema applications
// nested in one another), so a reference loop that the compiler cannot see
// ends with ErrTooComplex instead of exhausting the stack.
const maxEvalDepth = 10_000

// Draft names a JSON Schema dialect.
type Draft int

// Dialects understood by Compile.
const (
	Draft2020 Draft = iota // https://json-schema.org/draft/2020-12/schema
	Draft7                 // http://json-schema.org/draft-07/schema#
)

// Options configures Compile. The zero value (or nil) selects the defaults.
type Options struct {
	// FormatAnnotationOnly turns format into an annotation. The default
	// asserts every format the format package knows; unknown formats are
	// always annotations.
	FormatAnnotationOnly bool
	// Registry holds extra schemas by URI that $ref may name. nil means only
	// the embedded meta-schemas are available.
	Registry *Registry
	// MaxNodes bounds the number of compiled schema nodes
	// (DefaultMaxNodes when zero).
	MaxNodes int
	// MaxSteps bounds the schema applications of one Evaluate call
	// (DefaultMaxSteps when zero); beyond it Evaluate returns ErrTooComplex.
	MaxSteps int
	// DefaultDraft is the dialect of a document without $schema
	// (Draft2020 when zero).
	DefaultDraft Draft
	// MaxPatternSize bounds the compiled program of one pattern or
	// patternProperties key, in ecmaregex.Program.Size units
	// (DefaultMaxPatternSize when zero); a larger one is an *Error saying
	// it is too large. Repetition counts multiply a program's size, so a
	// short pattern can be large.
	MaxPatternSize int
	// MaxPatternsSize bounds the compiled programs of all of a schema's
	// distinct patterns together (DefaultMaxPatternsSize when zero).
	MaxPatternsSize int
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxNodes <= 0 {
		r.MaxNodes = DefaultMaxNodes
	}
	if r.MaxSteps <= 0 {
		r.MaxSteps = DefaultMaxSteps
	}
	if r.MaxPatternSize <= 0 {
		r.MaxPatternSize = DefaultMaxPatternSize
	}
	if r.MaxPatternsSize <= 0 {
		r.MaxPatternsSize = DefaultMaxPatternsSize
	}
	return r
}

// Error is an invalid schema: where it is and how to fix it.
type Error struct {
	Pointer string // RFC 6901 pointer inside the schema document, "" = root
	Problem string // what is wrong
	Fix     string // how to fix it
}

func (e *Error) Error() string {
	at := e.Pointer
	if at == "" {
		at = "(root)"
	}
	return fmt.Sprintf("invalid schema at %s: %s; %s", at, e.Problem, e.Fix)
}

// ErrTooComplex reports an evaluation that exceeded Options.MaxSteps (or the
// evaluator's nesting bound).
var ErrTooComplex = errors.New("schema evaluation exceeded its step limit")

// Schema is a compiled schema. It is read-only and safe for concurrent use.
type Schema struct {
	root     *node
	nodes    []*node // by id: evaluation records refer to nodes by index
	maxSteps int
	useScope bool      // some $dynamicRef looks up the dynamic scope
	pool     sync.Pool // *evaluator
	typos    []KeywordTypo
	// patternSize is the size of the compiled patterns
	// (ecmaregex.Program.Size units), size the heap the schema holds.
	patternSize int
	size        int64
}

// KeywordTypos lists the members of the schema's objects that are likely
// misspelt keywords (KeywordTypo), by pointer then member. They are not
// errors: the specification ignores unknown members.
func (s *Schema) KeywordTypos() []KeywordTypo { return s.typos }

// Result is the outcome of one evaluation.
type Result struct {
	Valid bool
	// Passed and Total count the schema checks (see the package comment).
	Passed, Total int
	// Failures has one entry per failed check, in a deterministic
	// evaluation order: depth first; within a schema $ref, then the value's
	// own assertions, then allOf/anyOf/oneOf/not/if, then the object or array
	// keywords; properties by sorted name (a decoded schema keeps no key
	// order) and instance keys sorted where they drive the order. Past the
	// limit EvaluateWith was given, failures are only counted (Omitted).
	Failures []Failure
	// Described counts the object locations that an applied subschema with
	// properties described.
	Described int
	// Undeclared lists, in post-order, the described locations that hold
	// keys no properties or patternProperties applied there names (at most
	// the limit EvaluateWith was given; Omitted counts the rest).
	Undeclared []Described
	// Omitted counts what the limit EvaluateWith was given left out; nil
	// when it left nothing out.
	Omitted *Omitted
}

// Omitted is what an evaluation with a limit on its records counted
// without recording.
type Omitted struct {
	// Failures counts the failed checks Result.Failures leaves out;
	// Keywords are their keywords, each once, in the order they first
	// failed.
	Failures int
	Keywords []string
	// Undeclared counts the described locations with undeclared keys that
	// Result.Undeclared leaves out.
	Undeclared int
}

// Failure is one failed check: where it failed, and its report.
type Failure struct {
	InstancePath string // RFC 6901 pointer into the instance, "" = root
	// Report is what the check says. Failures of one evaluation that read
	// the same but for their location (an agent repeating one mistake down
	// a list) share one Report; it is read-only.
	*Report
}

// Report is what a failed check says, apart from where it failed.
type Report struct {
	Keyword         string // the assertion keyword, or "false" for a false schema
	KeywordLocation string // RFC 6901 pointer of the keyword in its schema document
	Expected        string // what the check requires, concisely
	Found           string // what the instance has, quoted at most 80 characters
	// Message is what must change, as the predicate of a sentence whose
	// subject is the value ("must be at least 1, but it is number 0."): a
	// caller names the location in its own notation. Sentence gives the
	// whole sentence with the RFC 6901 location.
	Message string
}

// Sentence is the failure as one sentence naming its RFC 6901 location:
// "The value at /qty must be at least 1, but it is number 0.", or "The root
// value …" at the root.
func (f Failure) Sentence() string {
	if f.InstancePath == "" {
		return "The root value " + f.Message
	}
	return "The value at " + f.InstancePath + " " + f.Message
}

// String is the failure's sentence and its keyword's location, for logs and
// test messages.
func (f Failure) String() string {
	if f.Report == nil {
		return f.InstancePath
	}
	return f.Sentence() + " (" + f.KeywordLocation + ")"
}

// Described is an object that at least one applied subschema with properties
// describes, with the keys that no properties or patternProperties of any
// subschema applied there names (sorted).
type Described struct {
	InstancePath string
	Undeclared   []string
}

// Evaluate evaluates instance, a value decoded with json.Decoder.UseNumber
// (map[string]any, []any, string, bool, nil, json.Number; float64 is
// accepted too). It returns ErrTooComplex when the evaluation exceeds the
// step limit, and an error for values of other Go types.
func (s *Schema) Evaluate(instance any) (*Result, error) {
	return s.EvaluateContext(context.Background(), instance)
}
