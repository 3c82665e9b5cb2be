package rest

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/internal/ijson"
)

// TestHTTPOpenAPITags walks every operation the server documents, the
// transparency log's included, and the operations the payment and metrics
// layers add: each carries a tag the document declares, so none lands under
// Swagger UI's "default".
func TestHTTPOpenAPITags(t *testing.T) {
	f := newLogFixture(t)
	_, doc := openAPIDoc(t, f)
	declared := map[string]bool{}
	for _, tag := range doc["tags"].([]any) {
		declared[tag.(map[string]any)["name"].(string)] = true
	}
	checkTags := func(where string, op map[string]any) {
		tags, _ := op["tags"].([]any)
		if len(tags) == 0 {
			t.Errorf("%s has no tag", where)
		}
		for _, tag := range tags {
			if name, _ := tag.(string); !declared[name] {
				t.Errorf("%s has tag %v, which the document's tags do not declare", where, tag)
			}
		}
	}
	ops := documentedOps(doc)
	for _, op := range ops {
		method, path, _ := strings.Cut(op, " ")
		checkTags(op, doc["paths"].(map[string]any)[path].(map[string]any)[method].(map[string]any))
	}
	for _, want := range []string{"get /log/checkpoint", "get /log/proof/{verification_id}", "get /log/tile/{path}", "get /log/receipts/{path}"} {
		if !slices.Contains(ops, want) {
			t.Errorf("the log fixture does not document %s; documented: %v", want, ops)
		}
	}
	for name, raw := range map[string]string{"GET /metrics": metricsOperation, "GET /.well-known/x402": wellKnownX402Operation} {
		var op map[string]any
		if err := json.Unmarshal([]byte(raw), &op); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkTags(name, op)
	}
}

// mediaType is the media type of a Content-Type value, without parameters.
func mediaType(t *testing.T, contentType string) string {
	t.Helper()
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		t.Errorf("Content-Type %q: %v", contentType, err)
	}
	return mt
}

// TestHTTPOpenAPIDocsAssetTypes fetches every file /docs/{asset} documents:
// the documented names are those served, and each is served with one of the
// documented media types, every one of which some file has.
func TestHTTPOpenAPIDocsAssetTypes(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	_, doc := openAPIDoc(t, f)
	op := doc["paths"].(map[string]any)["/docs/{asset}"].(map[string]any)["get"].(map[string]any)
	var names []string
	for _, n := range op["parameters"].([]any)[0].(map[string]any)["schema"].(map[string]any)["enum"].([]any) {
		names = append(names, n.(string))
	}
	if diff := cmp.Diff(docsAssets(), names); diff != "" {
		t.Errorf("served assets (-) and documented ones (+) differ:\n%s", diff)
	}
	documented := map[string]bool{}
	for mt := range op["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any) {
		documented[mt] = false
	}
	for _, name := range docsAssets() {
		resp, body := f.do(t, http.MethodGet, "/docs/"+name, nil, nil)
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET /docs/%s = %d (%d bytes)", name, resp.StatusCode, len(body))
			continue
		}
		mt := mediaType(t, resp.Header.Get("Content-Type"))
		if _, ok := documented[mt]; !ok {
			t.Errorf("GET /docs/%s is served as %s, which /docs/{asset} does not document", name, mt)
		}
		documented[mt] = true
		if sniffed := mediaType(t, http.DetectContentType(body)); mt == "image/svg+xml" && sniffed != "text/xml" && sniffed != "text/plain" {
			t.Errorf("GET /docs/%s: served as SVG, but its bytes sniff as %s", name, sniffed)
		}
	}
	for mt, served := range documented {
		if !served {
			t.Errorf("/docs/{asset} documents %s, which no asset is served as", mt)
		}
	}
}

// TestHTTPOpenAPIMCPErrors provokes every error status /mcp documents and
// checks the served Content-Type is the documented one and the body fits the
// documented schema.
func TestHTTPOpenAPIMCPErrors(t *testing.T) {
	f := newHTTPFixture(t, &HTTPOptions{MaxBodyBytes: 1 << 10}, nil)
	raw, _ := openAPIDoc(t, f)
	typed, err := ijson.Decode(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := newSchemaValidator(t, raw)
	responses := typed.(map[string]any)["paths"].(map[string]any)["/mcp"].(map[string]any)["post"].(map[string]any)["responses"].(map[string]any)
	componentResponses := typed.(map[string]any)["components"].(map[string]any)["responses"].(map[string]any)

	listTools := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	mcpHeader := func(contentType string) http.Header {
		return http.Header{"Content-Type": {contentType}, "Accept": {"application/json, text/event-stream"}}
	}
	provoke := map[string]struct {
		body   string
		header http.Header
		host   string
	}{
		"400": {body: `{"jsonrpc":`, header: mcpHeader("application/json")},
		"403": {body: listTools, header: mcpHeader("application/json"), host: "rebind.example"},
		"413": {body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 2<<10) + `"}}`, header: mcpHeader("application/json")},
		"415": {body: listTools, header: mcpHeader("text/plain")},
	}
	var statuses []string
	for status := range responses {
		if status[0] == '4' || status[0] == '5' {
			statuses = append(statuses, status)
		}
	}
	sort.Strings(statuses)
	if diff := cmp.Diff([]string{"400", "403", "413", "415"}, statuses); diff != "" {
		t.Errorf("/mcp's documented error statuses differ from those this test provokes (-want +got):\n%s", diff)
	}
	for _, status := range statuses {
		p, ok := provoke[status]
		if !ok {
			continue
		}
		t.Run(status, func(t *testing.T) {
			resp := responses[status].(map[string]any)
			if ref, ok := resp["$ref"].(string); ok {
				resp = componentResponses[strings.TrimPrefix(ref, "#/components/responses/")].(map[string]any)
			}
			content := resp["content"].(map[string]any)
			if len(content) != 1 {
				t.Fatalf("%s documents %d media types, want one", status, len(content))
			}
			var documentedType string
			var media map[string]any
			for documentedType = range content {
				media = content[documentedType].(map[string]any)
			}
			req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/mcp", strings.NewReader(p.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = p.header
			if p.host != "" {
				req.Host = p.host
			}
			got, err := f.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Body.Close()
			body, err := io.ReadAll(got.Body)
			if err != nil {
				t.Fatal(err)
			}
			if strconv.Itoa(got.StatusCode) != status {
				t.Fatalf("provoking %s got %d", status, got.StatusCode)
			}
			if mt := mediaType(t, got.Header.Get("Content-Type")); mt != documentedType {
				t.Errorf("%s is served as %s, documented as %s", status, mt, documentedType)
			}
			instance, err := ijson.Decode(body, nil)
			if err != nil {
				t.Fatalf("%s body is not JSON: %v", status, err)
			}
			v.check(t, "/mcp "+status, media["schema"].(map[string]any), instance)
		})
	}
}

// TestHTTPOpenAPIForbidden: the Host and Origin check runs before every
// route, so every documented operation has a 403 — the Forbidden response
// (a JSON-RPC error on /mcp) — and a foreign Host gets what it describes.
func TestHTTPOpenAPIForbidden(t *testing.T) {
	f := newLogFixture(t)
	_, doc := openAPIDoc(t, f)
	for _, op := range documentedOps(doc) {
		method, path, _ := strings.Cut(op, " ")
		operation := doc["paths"].(map[string]any)[path].(map[string]any)[method].(map[string]any)
		forbidden, ok := operation["responses"].(map[string]any)["403"].(map[string]any)
		switch {
		case !ok:
			t.Errorf("%s documents no 403", op)
		case path == "/mcp":
			if forbidden["$ref"] != nil {
				t.Errorf("%s: 403 is %v, want its own JSON-RPC error", op, forbidden["$ref"])
			}
		case forbidden["$ref"] != "#/components/responses/Forbidden":
			t.Errorf("%s: 403 is %v, want the Forbidden response", op, forbidden)
		}
	}
	example := doc["components"].(map[string]any)["responses"].(map[string]any)["Forbidden"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["examples"].(map[string]any)["foreign_host"].(map[string]any)["value"]
	resp, body := f.hostRequest(t, http.MethodGet, "/reputation/seller-7", "evil.example", "", nil)
	var got any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("403 body: %v", err)
	}
	if resp.StatusCode != http.StatusForbidden || !cmp.Equal(got, example) {
		t.Errorf("a foreign Host got %d %s, want 403 and the documented example %v", resp.StatusCode, body, example)
	}
}
