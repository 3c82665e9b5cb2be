package schema

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
)

// Registry holds schema documents by URI for $ref to name without any
// fetching. Add and AddDir must not run concurrently with Compile calls that
// use the registry.
type Registry struct {
	docs  map[string]*regDoc // by retrieval URI
	index map[string]*regDoc // every $id found in a document, and its retrieval URI
}

type regDoc struct {
	uri string
	raw any
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{docs: map[string]*regDoc{}, index: map[string]*regDoc{}}
}

// Add registers doc, a decoded schema document (json.Number numbers), under
// the absolute URI uri. Identifiers ($id) inside doc become resolvable too.
func (r *Registry) Add(uri string, doc any) error {
	u, err := normalizeURI(uri)
	if err != nil {
		return fmt.Errorf("registering %q: %w", uri, err)
	}
	d := &regDoc{uri: u, raw: doc}
	r.docs[u] = d
	r.index[u] = d
	indexIDs(r.index, d, doc, u, 0)
	return nil
}

// indexIDs records every $id inside v, resolved against base, as naming d.
// It over-approximates (it does not know the dialect); Compile scans the
// document properly once it is loaded.
func indexIDs(index map[string]*regDoc, d *regDoc, v any, base string, depth int) {
	if depth > maxSchemaDepth*4 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["$id"].(string); ok {
			if abs, _, err := resolveURI(base, id); err == nil {
				base = abs
				addFirst(index, abs, d)
			}
		}
		for k, c := range x {
			if k == "enum" || k == "const" {
				continue
			}
			indexIDs(index, d, c, base, depth+1)
		}
	case []any:
		for _, c := range x {
			indexIDs(index, d, c, base, depth+1)
		}
	}
}

// AddDir registers every *.json file under dir under its own $id.
func (r *Registry) AddDir(dir string) error {
	if err := r.addFS(os.DirFS(dir), idOf); err != nil {
		return fmt.Errorf("reading schema dir: %w", err)
	}
	return nil
}

// idOf returns the $id of a decoded schema document, "" when it has none.
func idOf(_ string, doc any) string {
	obj, _ := doc.(map[string]any)
	id, _ := obj["$id"].(string)
	return id
}

// addFS registers every *.json file of fsys, in lexical order, under the
// URI that uriOf gives its path and decoded document.
func (r *Registry) addFS(fsys fs.FS, uriOf func(name string, doc any) string) error {
	return fs.WalkDir(fsys, ".", func(name string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || !strings.HasSuffix(name, ".json") {
			return err
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		doc, err := decodeJSON(b)
		if err != nil {
			return fmt.Errorf("decoding %s: %w", name, err)
		}
		if err := r.Add(uriOf(name, doc), doc); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
}

// decodeJSON decodes one JSON value with json.Number numbers.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// Embedded meta-schemas of the supported drafts.
//
//go:embed metaschemas
var metaFS embed.FS

const (
	meta2020URI = "https://json-schema.org/draft/2020-12/schema"
	meta7URI    = "http://json-schema.org/draft-07/schema"
)

// builtinRegistry decodes the embedded meta-schemas once, each under its
// own $id; the result is never modified.
var builtinRegistry = sync.OnceValues(func() (*Registry, error) {
	r := NewRegistry()
	if err := r.addFS(metaFS, idOf); err != nil {
		return nil, fmt.Errorf("registering the embedded meta-schemas: %w", err)
	}
	return r, nil
})
