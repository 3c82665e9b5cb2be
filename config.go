package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
)

// version, commit and date are stamped by a release build:
//
//	-ldflags "-X main.version=1.2.3 -X main.commit=<sha> -X main.date=<RFC 3339>"
//
// Each one set overrides what the binary's build info says.
var version, commit, date string

// sourceVersion is the version of this source tree between releases.
const sourceVersion = "0.1.0-dev"

// verifierVersion is verifier_version in every answer: the stamped
// version, else the one the build info gives (see versionOf).
func verifierVersion() string { return thisBuild().Version }

// versionOf derives the version from a binary's build info. A build from a
// checkout reports sourceVersion: `go build` stamps VCS data (the commit,
// and a module version derived from it) while `go run` does not, and one
// commit must give one verifier_version however it was started. Only a
// build of a published module (`go install …@v1.2.3`, from the module
// cache, so with no VCS data) reports its module version, without the "v".
func versionOf(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		return sourceVersion
	}
	for _, s := range info.Settings {
		if strings.HasPrefix(s.Key, "vcs") {
			return sourceVersion
		}
	}
	return strings.TrimPrefix(v, "v")
}

// defaultDataDir is the default of every --data-dir: $VERIFIER_DATA_DIR
// when set (the release image sets /data), else $XDG_DATA_HOME/verifier, else
// ~/.local/share/verifier.
func defaultDataDir(getenv func(string) string) string {
	if d := getenv("VERIFIER_DATA_DIR"); d != "" {
		return d
	}
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "verifier")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "verifier")
	}
	return "verifier-data"
}

// engineFlags are the verification limits shared by every mode.
type engineFlags struct {
	cacheSize, listCap, maxDepth, maxRules, maxBounds int
	maxSchemaNodes, maxSteps                          int
	schemaDir                                         string
}

func (f *engineFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.cacheSize, "schema-cache", engine.DefaultCacheSize, "compiled schemas kept in memory (LRU, by schema hash); as many canonical forms of small schemas and rule sets")
	fs.IntVar(&f.listCap, "list-cap", engine.DefaultListCap, "cap on each list of an answer (errors, flags, hints)")
	fs.IntVar(&f.maxDepth, "max-depth", engine.DefaultMaxDepth, "deepest nesting accepted in a request")
	fs.IntVar(&f.maxRules, "max-rules", engine.DefaultMaxRules, "most rules per request")
	fs.IntVar(&f.maxBounds, "max-bounds", engine.DefaultMaxBounds, "most bounds per request")
	fs.IntVar(&f.maxSchemaNodes, "max-schema-nodes", 0, "most schema nodes per expected_schema (0: the engine default)")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "most evaluation steps per verification (0: the engine default)")
	fs.StringVar(&f.schemaDir, "schema-dir", "", "preload every *.json schema under this folder by its $id (never fetched at run time)")
}

func (f *engineFlags) verifier() (*engine.Verifier, error) {
	opts := &engine.Options{
		CacheSize: f.cacheSize, ListCap: f.listCap, MaxDepth: f.maxDepth,
		MaxRules: f.maxRules, MaxBounds: f.maxBounds,
		Schema: schema.Options{MaxNodes: f.maxSchemaNodes, MaxSteps: f.maxSteps},
	}
	if f.schemaDir != "" {
		reg := schema.NewRegistry()
		if err := reg.AddDir(f.schemaDir); err != nil {
			return nil, fmt.Errorf("loading --schema-dir: %w", err)
		}
		opts.Schema.Registry = reg
	}
	return engine.New(opts), nil
}

// openKeys opens the key store under dataDir/keys.
func openKeys(dataDir string, getenv func(string) string) (*signing.KeyStore, error) {
	ks, err := signing.OpenKeyStore(filepath.Join(dataDir, "keys"), &signing.KeyStoreOptions{EnvSeed: getenv("VERIFIER_SIGNING_KEY")})
	if err != nil {
		return nil, fmt.Errorf("opening key store: %w", err)
	}
	return ks, nil
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// service builds the shared core for a mode.
func service(v *engine.Verifier, keys *signing.KeyStore, publicURL string) *tools.Service {
	return &tools.Service{Engine: v, Keys: keys, Version: verifierVersion(), PublicURL: publicURL}
}
