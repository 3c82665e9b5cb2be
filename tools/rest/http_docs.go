package rest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
)

// docsFS holds the documents the HTTP mode serves: the OpenAPI document, the
// llms.txt template, the /docs page with its vendored Swagger UI assets
// (scripts/vendor-docs.sh) and the request-hash vectors of the agent card.
//
//go:embed docs
var docsFS embed.FS

// docsCSP keeps the /docs page on this server: it may load and call nothing
// else (Swagger UI styles its elements inline).
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docsAssets lists the files of /docs/{asset}: the page's own script and
// style, and the vendored Swagger UI with its licence; and those of the pages
// for people (http_pages.go): their style, the scripts of /check (its
// transparency log check in logcheck.js) and the vendored RFC 8785
// canonicalizer they import, with its licence; and the favicon every page
// links to. openapi.json's /docs/{asset} lists the same names.
func docsAssets() []string {
	return []string{"init.js", "docs.css", "swagger-ui-bundle.js", "swagger-ui.css", "LICENSE",
		"pages.css", "check.js", "logcheck.js", "canonicalize.js", "canonicalize.LICENSE", "favicon.svg"}
}

// assetType is the content type of a docs asset, by extension.
func assetType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	default:
		return "text/plain; charset=utf-8"
	}
}

// buildDocs loads the /docs page ("") and its assets.
func buildDocs() (map[string]staticDoc, error) {
	docs := map[string]staticDoc{}
	page, err := docsFS.ReadFile("docs/page/index.html")
	if err != nil {
		return nil, fmt.Errorf("reading the docs page: %w", err)
	}
	index := newStaticDoc("index.html", "text/html; charset=utf-8", "no-cache", page)
	index.headers = map[string]string{"Content-Security-Policy": docsCSP, "Referrer-Policy": "no-referrer"}
	docs[""] = index
	for _, name := range docsAssets() {
		body, err := fs.ReadFile(docsFS, assetPath(name))
		if err != nil {
			return nil, fmt.Errorf("reading docs asset: %w", err)
		}
		docs[name] = newStaticDoc(name, assetType(name), "public, max-age=3600", body)
	}
	return docs, nil
}

// assetPath is where an asset of /docs/{asset} lives in docsFS.
func assetPath(name string) string {
	switch {
	case strings.HasPrefix(name, "swagger-ui") || name == "LICENSE":
		return "docs/swagger-ui/" + name
	case name == "canonicalize.js":
		return "docs/canonicalize/canonicalize.js"
	case name == "canonicalize.LICENSE":
		return "docs/canonicalize/LICENSE"
	}
	return "docs/page/" + name
}

func (h *HTTPHandler) docsPage(w http.ResponseWriter, r *http.Request) {
	h.docs[""].ServeHTTP(w, r)
}

func (h *HTTPHandler) docsAsset(w http.ResponseWriter, r *http.Request) {
	doc, ok := h.docs[r.PathValue("asset")]
	if !ok || r.PathValue("asset") == "" {
		writeError(w, tools.NewError(tools.CodeNotFound, http.StatusNotFound,
			"The documentation page has no such file. Open /docs for the API reference."))
		return
	}
	doc.ServeHTTP(w, r)
}

// buildOpenAPI renders the OpenAPI document once: the embedded one with the
// tools' contracts in place (withContract), this deployment's URL and
// version, plus the operations of HTTPOptions.Routes.
func (h *HTTPHandler) buildOpenAPI() (staticDoc, error) {
	raw, err := docsFS.ReadFile("docs/openapi.json")
	if err != nil {
		return staticDoc{}, fmt.Errorf("reading openapi.json: %w", err)
	}
	if raw, err = withContract(raw); err != nil {
		return staticDoc{}, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return staticDoc{}, fmt.Errorf("decoding openapi.json: %w", err)
	}
	var info map[string]json.RawMessage
	if err := json.Unmarshal(top["info"], &info); err != nil {
		return staticDoc{}, fmt.Errorf("decoding openapi.json info: %w", err)
	}
	if info["version"], err = json.Marshal(h.svc.Version); err != nil {
		return staticDoc{}, fmt.Errorf("encoding openapi.json info: %w", err)
	}
	if info["description"], err = withErrorTable(info["description"]); err != nil {
		return staticDoc{}, err
	}
	if top["info"], err = orderedJSON([]string{"title", "summary", "description", "version"}, info); err != nil {
		return staticDoc{}, err
	}
	servers := []map[string]string{{"url": h.svc.BaseURL(), "description": "This deployment"}}
	if top["servers"], err = json.Marshal(servers); err != nil {
		return staticDoc{}, fmt.Errorf("encoding openapi.json servers: %w", err)
	}
	var paths map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["paths"], &paths); err != nil {
		return staticDoc{}, fmt.Errorf("decoding openapi.json paths: %w", err)
	}
	if err := addOperations(paths, h.opts.Routes); err != nil {
		return staticDoc{}, err
	}
	if err := addForbidden(paths); err != nil {
		return staticDoc{}, err
	}
	if top["paths"], err = json.Marshal(paths); err != nil {
		return staticDoc{}, fmt.Errorf("encoding openapi.json paths: %w", err)
	}
	body, err := orderedJSON([]string{"openapi", "info", "servers", "security", "tags", "paths", "components"}, top)
	if err != nil {
		return staticDoc{}, err
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, body, "", "  "); err != nil {
		return staticDoc{}, fmt.Errorf("indenting openapi.json: %w", err)
	}
	return newStaticDoc("openapi.json", "application/json", "public, max-age=300", indented.Bytes()), nil
}

// contractPlaceholder matches a placeholder of openapi.json,
// {"x-contract": "TOOL.PART"}: where the document takes a part of a tool's
// contract (package contract), PART being input, input.MEMBER, answer or
// example. A
// placeholder is a valid (empty) schema, so the embedded document lints as
// it is. Inside a JSON string its quotes are escaped, so it never matches
// there.
var contractPlaceholder = regexp.MustCompile(`\{\s*"x-contract"\s*:\s*"([^"\\]*)"\s*\}`)

// withContract puts the tools' contracts into the OpenAPI document raw in
// place of its placeholders, so that the request MCP lists for a tool and
// the one this document describes are the same bytes.
func withContract(raw []byte) ([]byte, error) {
	var bad error
	out := contractPlaceholder.ReplaceAllFunc(raw, func(m []byte) []byte {
		name := string(contractPlaceholder.FindSubmatch(m)[1])
		part, err := contractPart(name)
		if err != nil && bad == nil {
			bad = fmt.Errorf("openapi.json: %w", err)
		}
		return part
	})
	if bad != nil {
		return nil, bad
	}
	return out, nil
}

// contractPart is the part of a tool's contract named "TOOL.PART", or
// "TOOL.input.NAME": the schema of the input's member NAME (a path
// parameter over REST).
func contractPart(name string) (json.RawMessage, error) {
	toolName, part, _ := strings.Cut(name, ".")
	part, member, isMember := strings.Cut(part, ".")
	tool, ok := contract.Lookup(toolName)
	if !ok {
		return nil, fmt.Errorf("placeholder %q names no tool", name)
	}
	var v json.RawMessage
	switch {
	case part == "input" && isMember:
		var input struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tool.Input, &input); err != nil {
			return nil, fmt.Errorf("placeholder %q: decoding the input schema: %w", name, err)
		}
		v = input.Properties[member]
	case isMember:
	case part == "input":
		v = tool.Input
	case part == "answer":
		v = tool.Answer
	case part == "example":
		v = tool.Example
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("placeholder %q names no part of the tool's contract (input, input.MEMBER, answer, example)", name)
	}
	return v, nil
}

// errorTablePlaceholder marks where info.description of openapi.json takes
// the error table, rendered from ErrorCodes like /llms.txt's.
const errorTablePlaceholder = "{{error_table}}"

// withErrorTable puts the error table into openapi.json's description.
func withErrorTable(rawDescription json.RawMessage) (json.RawMessage, error) {
	var description string
	if err := json.Unmarshal(rawDescription, &description); err != nil {
		return nil, fmt.Errorf("decoding openapi.json info.description: %w", err)
	}
	if strings.Count(description, errorTablePlaceholder) != 1 {
		return nil, fmt.Errorf("openapi.json info.description must hold %s once", errorTablePlaceholder)
	}
	description = strings.Replace(description, errorTablePlaceholder, strings.TrimSuffix(ErrorTable(), "\n"), 1)
	out, err := json.Marshal(description)
	if err != nil {
		return nil, fmt.Errorf("encoding openapi.json info.description: %w", err)
	}
	return out, nil
}

// addOperations adds the extra routes' operations to paths.
func addOperations(paths map[string]map[string]json.RawMessage, routes []HTTPRoute) error {
	for _, rt := range routes {
		method, p, ok := splitPattern(rt.Pattern)
		if !ok {
			return fmt.Errorf("route %q: an extra route needs a method and a path", rt.Pattern)
		}
		if !json.Valid(rt.Operation) {
			return fmt.Errorf("route %q: its OpenAPI operation is not JSON", rt.Pattern)
		}
		if paths[p] == nil {
			paths[p] = map[string]json.RawMessage{}
		}
		if _, dup := paths[p][method]; dup {
			return fmt.Errorf("route %q: already documented", rt.Pattern)
		}
		paths[p][method] = rt.Operation
	}
	return nil
}

// forbiddenRef is the response every operation but /mcp's gains as its 403:
// hostGuard runs before every route (/mcp answers its 403 as a JSON-RPC
// error, documented with its own operation).
var forbiddenRef = json.RawMessage(`{"$ref":"#/components/responses/Forbidden"}`)

// addForbidden adds the 403 of the Host and Origin check to every
// operation of paths that does not document one.
func addForbidden(paths map[string]map[string]json.RawMessage) error {
	for p, ops := range paths {
		for method, rawOp := range ops {
			var op map[string]json.RawMessage
			if err := json.Unmarshal(rawOp, &op); err != nil || op["responses"] == nil {
				continue // a path-level member (parameters, summary), not an operation
			}
			var responses map[string]json.RawMessage
			if err := json.Unmarshal(op["responses"], &responses); err != nil {
				return fmt.Errorf("decoding openapi.json %s %s responses: %w", method, p, err)
			}
			if _, ok := responses["403"]; ok {
				continue
			}
			responses["403"] = forbiddenRef
			var err error
			if op["responses"], err = json.Marshal(responses); err != nil {
				return fmt.Errorf("encoding openapi.json %s %s responses: %w", method, p, err)
			}
			if ops[method], err = json.Marshal(op); err != nil {
				return fmt.Errorf("encoding openapi.json %s %s: %w", method, p, err)
			}
		}
	}
	return nil
}

// wildcardRest matches a "{name...}" wildcard, which OpenAPI writes {name}.
var wildcardRest = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\.\.\.\}`)

// splitPattern splits a mux pattern "GET /a/{b}" into the OpenAPI method
// ("get") and path ("/a/{b}"). A pattern with a host is not supported.
func splitPattern(pattern string) (method, p string, ok bool) {
	m, rest, found := strings.Cut(pattern, " ")
	if !found || !strings.HasPrefix(rest, "/") {
		return "", "", false
	}
	return strings.ToLower(m), wildcardRest.ReplaceAllString(path.Clean(rest), "{$1}"), true
}

// orderedJSON writes the members of m as one JSON object, those named in
// order first and the rest sorted by name.
func orderedJSON(order []string, m map[string]json.RawMessage) ([]byte, error) {
	names := make([]string, 0, len(m))
	for name := range m {
		if !slices.Contains(order, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, name := range append(slices.Clone(order), names...) {
		v, ok := m[name]
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		key, err := ijson.Marshal(name)
		if err != nil {
			return nil, fmt.Errorf("encoding member %q: %w", name, err)
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
