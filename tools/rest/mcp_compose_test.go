package rest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/mcpserver"
)

// withMCP composes the HTTP mode as main does: opts (a new one when nil)
// with the MCP adapter's handler at /mcp, unless one is set.
func withMCP(svc *tools.Service, opts *HTTPOptions) *HTTPOptions {
	if opts == nil {
		opts = &HTTPOptions{}
	}
	if opts.MCP == nil {
		opts.MCP = mcpserver.NewMCPHandler(svc)
	}
	return opts
}

// TestNewHTTPHandlerNeedsMCP: without the MCP handler the HTTP mode is not
// built, rather than serving a /mcp its documents promise and it lacks.
func TestNewHTTPHandlerNeedsMCP(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	for _, opts := range []*HTTPOptions{nil, {}} {
		if _, err := NewHTTPHandler(f.svc, opts); err == nil || !strings.Contains(err.Error(), "MCP") {
			t.Errorf("NewHTTPHandler(svc, %+v) = %v, want an error naming the MCP handler", opts, err)
		}
	}
}

// TestRESTDoesNotImportMCPServer: package rest depends on the core and on
// the packages both adapters share, never on the MCP adapter; main
// composes the two.
func TestRESTDoesNotImportMCPServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || !strings.HasSuffix(deps[len(deps)-1], "/tools/rest") {
		t.Fatalf("go list -deps . does not end with package rest:\n%s", out)
	}
	for _, dep := range deps {
		if strings.HasSuffix(dep, "/tools/mcpserver") {
			t.Errorf("package rest depends on %s; compose MCP in the caller (HTTPOptions.MCP) and share through tools/contract or tools/mcpwire", dep)
		}
	}
}
