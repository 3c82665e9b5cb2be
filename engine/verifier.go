// Package engine turns a verification request into a verdict: it decodes and
// validates the request (SPEC §1), evaluates the schema, bounds, rules and
// content checks with their counting and blocking logic (§2–§3), and builds
// the answer (§4). It knows nothing of transports, storage or keys: hashing
// and signing are injected by the caller, so MCP, REST and the CLI share one
// path.
//
//	v := engine.New(nil)
//	req, err := v.DecodeRequest(body)        // *InvalidRequestError on 422
//	out, err := v.Check(req, schemaHash)     // the verdict and its findings
package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/verifier-dev/verifier/engine/ecmaregex"
	"github.com/verifier-dev/verifier/engine/schema"
)

// Verifier checks requests. It is safe for concurrent use.
type Verifier struct {
	opts Options
	// cache holds compiled schemas by schema hash, at most
	// SchemaCacheBudget bytes of them by their Size.
	cache *lru[*schema.Schema]
	// schemaText and checksText remember, for Hashes, what small schemas
	// and small bounds and rules give the hashes, by their bytes as sent.
	schemaText *lru[canonicalSchema]
	checksText *lru[canonicalChecks]
	// checksDecoded remembers small bounds and rules decoded, for
	// DecodeRequest.
	checksDecoded *lru[decodedChecks]
}

// New returns a Verifier; nil options mean the defaults.
func New(opts *Options) *Verifier {
	v := &Verifier{}
	if opts != nil {
		v.opts = *opts
	}
	if size := orDefault(v.opts.CacheSize, DefaultCacheSize); v.opts.CacheSize >= 0 {
		v.cache = newLRU[*schema.Schema](size, SchemaCacheBudget)
		v.schemaText = newLRU[canonicalSchema](size, rememberBudget)
		v.checksText = newLRU[canonicalChecks](size, rememberBudget)
		v.checksDecoded = newLRU[decodedChecks](size, rememberBudget)
	}
	return v
}

// SchemaCacheBudget is the most heap the compiled schemas a Verifier
// caches may hold together, by their accounted size (schema.Schema.Size,
// compiled patterns included): 32 MiB. A schema larger than that is not
// cached.
const SchemaCacheBudget = 32 << 20

// CachedSchemas reports how many compiled schemas the cache holds.
func (v *Verifier) CachedSchemas() int {
	return v.cache.len()
}

// CachedSchemaBytes reports the accounted size of the compiled schemas the
// cache holds (at most SchemaCacheBudget).
func (v *Verifier) CachedSchemaBytes() int64 {
	return int64(v.cache.totalCost())
}

// CompileRequest compiles the request's expected_schema, reusing a cached
// one with the same hash ("" skips the cache): it decodes the schema only
// when the cache does not hold it already. Problems with the schema come
// back as *InvalidRequestError. Its patterns are bounded in size
// (schema.Options.MaxPatternSize, MaxPatternsSize) but not charged to a
// budget: CheckContext compiles within the request's budget.
func (v *Verifier) CompileRequest(req *Request, schemaHash string) (*schema.Schema, error) {
	return v.compile(req, schemaHash, nil)
}

// compile is CompileRequest charging b (when not nil) for the patterns'
// compilation — CompileSteps again when the schema is cached, so that a
// request costs the same steps either way. When b stops the compilation,
// the error is stageError's.
func (v *Verifier) compile(req *Request, schemaHash string, b *schema.Budget) (*schema.Schema, error) {
	if s, ok := lookup(v.cache, schemaHash); ok {
		if b != nil && !b.Charge(s.CompileSteps()) {
			return nil, stageError(b.Err(), "compiling schema", "expected_schema", fixPatternSteps)
		}
		return s, nil
	}
	doc, err := req.SchemaDocument()
	if err != nil {
		return nil, err
	}
	var s *schema.Schema
	if b != nil {
		s, err = schema.CompileWith(doc, &v.opts.Schema, b)
	} else {
		s, err = schema.Compile(doc, &v.opts.Schema)
	}
	if err != nil {
		var se *schema.Error
		if errors.As(err, &se) {
			return nil, schemaInvalid(doc, se)
		}
		if b != nil && b.Stopped() {
			return nil, stageError(err, "compiling schema", "expected_schema", fixPatternSteps)
		}
		return nil, fmt.Errorf("compiling schema: %w", err)
	}
	v.cache.put(schemaHash, s, int(min(s.Size(), SchemaCacheBudget+1)))
	return s, nil
}

// CheckSchema reports the *InvalidRequestError compiling the request's
// expected_schema would report, without compiling its patterns
// (schema.Check): its cost is about linear in the schema as sent, however
// large its patterns' programs would be. A schema the cache holds (by
// schemaHash, "" for none) is valid. It is the check of a request that
// may be refused before it is served (an unpaid one), which must not cost
// what serving it would; nothing is cached.
func (v *Verifier) CheckSchema(req *Request, schemaHash string) error {
	if _, ok := lookup(v.cache, schemaHash); ok {
		return nil
	}
	doc, err := req.SchemaDocument()
	if err != nil {
		return err
	}
	if err := schema.Check(doc, &v.opts.Schema); err != nil {
		var se *schema.Error
		if errors.As(err, &se) {
			return schemaInvalid(doc, se)
		}
		return fmt.Errorf("checking schema: %w", err)
	}
	return nil
}

// CompileMemory is the heap compiling the request's schema may take
// beyond what its size accounts for: its patterns' programs, up to the
// schema's limit on them (schema.Options.MaxPatternsSize units of
// ecmaregex.InstBytes, twice: compiling a program allocates about as much
// again as it keeps). It is 0 for a schema without patterns, known from
// its bytes as sent: no member named pattern or patternProperties, nor any
// escape that could spell one.
func (v *Verifier) CompileMemory(req *Request) int64 {
	raw := req.raw[fieldSchema]
	if !bytes.Contains(raw, []byte(`"pattern`)) && !bytes.Contains(raw, []byte(`\u`)) {
		return 0
	}
	return 2 * ecmaregex.InstBytes * int64(orDefault(v.opts.Schema.MaxPatternsSize, schema.DefaultMaxPatternsSize))
}

// schemaInvalid is the request error of a schema that does not compile.
func schemaInvalid(doc any, se *schema.Error) *InvalidRequestError {
	return &InvalidRequestError{Fields: []FieldProblem{{
		Field: schemaField(doc, se.Pointer), Problem: se.Problem, Fix: se.Fix,
	}}}
}

// schemaField names a place inside expected_schema as a field path. A key
// that is not a plain name is named by its position among its object's
// sorted keys, as request errors name members (memberName), so that an
// error never quotes the caller's schema.
func schemaField(doc any, pointer string) string {
	loc := PointerLocation(doc, pointer)
	cur := doc
	for i, seg := range loc {
		if idx, isIndex := seg.(int); isIndex { // PointerLocation found cur an array that long
			cur = cur.([]any)[idx]
			continue
		}
		key := seg.(string)
		obj, isObj := cur.(map[string]any)
		_, isArr := cur.([]any)
		cur = obj[key]
		switch {
		case isObj && !safeName.MatchString(key):
			loc[i] = fmt.Sprintf("(member #%d)", slices.Index(sortedKeys(obj), key)+1)
		case isArr || !isObj && !safeName.MatchString(key): // a key in an array, or a name past where the schema ends
			loc[i] = "(member)"
		}
	}
	return "expected_schema" + strings.TrimPrefix(loc.String(), "$")
}

// Check evaluates every check of the request. schemaHash keys the compiled
// schema cache ("" skips the cache). A schema that cannot be compiled or
// evaluated within limits is an *InvalidRequestError.
func (v *Verifier) Check(req *Request, schemaHash string) (*Outcome, error) {
	return v.CheckContext(context.Background(), req, schemaHash)
}

// CheckContext is Check that gives up once ctx is done, with an error
// wrapping ctx.Err(). Every stage (the schema evaluation, then bounds,
// rules and content checks) spends from one step budget, the schema's
// limit, which checks ctx as it goes: so a request deadline bounds the whole
// check even where the step limit does not, and past the step limit the
// request is an *InvalidRequestError naming the field whose checks needed
// the steps. The outcome keeps the findings an answer can show, and only
// counts the rest.
func (v *Verifier) CheckContext(ctx context.Context, req *Request, schemaHash string) (*Outcome, error) {
	keep := v.opts.listCap()
	budget := schema.NewBudget(ctx, orDefault(v.opts.Schema.MaxSteps, schema.DefaultMaxSteps))
	compiled, err := v.compile(req, schemaHash, &budget)
	if err != nil {
		return nil, err
	}
	res, err := compiled.EvaluateWith(req.SubmittedOutput, &budget, keep)
	if err != nil {
		return nil, stageError(err, "evaluating schema", "expected_schema", fixSchemaSteps)
	}
	out := &Outcome{keep: keep}
	for _, f := range res.Failures {
		path := PointerLocation(req.SubmittedOutput, f.InstancePath).String()
		out.add(Finding{
			Source: SourceSchema, Check: "schema:" + f.Keyword, Path: path,
			Expected: f.Expected, Found: f.Found, Message: reportedMessage(f, path),
			Gate: GateSchema, Blocking: true,
		})
	}
	if om := res.Omitted; om != nil && om.Failures > 0 {
		// One finding per keyword names it; the others repeat the first.
		for _, kw := range om.Keywords {
			out.count(1, true, false, "schema:"+kw)
		}
		out.count(om.Failures-len(om.Keywords), true, false, "schema:"+om.Keywords[0])
	}
	var integrity tally
	for i := range req.Bounds {
		f, counted := checkBound(&req.Bounds[i], req.SubmittedOutput, &budget)
		if budget.Stopped() {
			return nil, stageError(budget.Err(), "checking bounds", "bounds", fixBoundsSteps)
		}
		if counted {
			integrity.record(f == nil)
		}
		if f != nil {
			out.add(*f)
		}
	}
	for i := range req.Rules {
		f, counted := checkRule(&req.Rules[i], req.SubmittedOutput, &budget)
		if budget.Stopped() {
			return nil, stageError(budget.Err(), "checking rules", "rules", fixRulesSteps)
		}
		if counted {
			integrity.record(f == nil)
		}
		if f != nil {
			f.Blocking = req.EnforceRules
			out.add(*f)
		}
	}
	checkPlaceholders(req.SubmittedOutput, req.StrictContentCheck, &integrity, out, &budget)
	if !budget.Stopped() {
		checkUndeclared(req.SubmittedOutput, res, req.StrictContentCheck, &integrity, out, &budget)
	}
	if budget.Stopped() {
		return nil, stageError(budget.Err(), "checking content", "submitted_output", fixContentSteps)
	}
	addKeywordTypos(out, compiled.KeywordTypos())
	markStringifiedOutput(out.Findings, req.SubmittedOutput)

	out.Pass = out.seen.blocking == 0
	out.Schema = NewRatio(res.Passed, res.Total)
	out.Integrity = NewRatio(integrity.passed, integrity.total)
	out.Overall = NewRatio(res.Passed+integrity.passed, res.Total+integrity.total)
	return out, nil
}

// reportedMessage is the failure's sentence with its location in the
// `$.items[0]` form every path of an answer uses.
func reportedMessage(f schema.Failure, path string) string {
	if f.InstancePath == "" {
		return "The root value " + f.Message
	}
	return "The value at " + path + " " + f.Message
}
