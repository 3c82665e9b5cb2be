package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/mcpserver"
)

// A client calls verify_schema on the verifier's MCP server (here over the
// SDK's in-memory transports; ServeStdio and NewMCPHandler serve the same
// server over stdio and HTTP).
func ExampleNewMCPServer() {
	dir, err := os.MkdirTemp("", "verifier-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	keys, err := signing.OpenKeyStore(filepath.Join(dir, "keys"), nil)
	if err != nil {
		log.Fatal(err)
	}
	svc := &tools.Service{Engine: engine.New(nil), Keys: keys, Version: "example", Log: slog.New(slog.DiscardHandler)}

	ctx := context.Background()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := mcpserver.NewMCPServer(svc).Connect(ctx, serverT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contract.VerifySchema, Arguments: json.RawMessage(`{
		"task_id": "greeting-1",
		"expected_schema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string", "minLength": 1}}},
		"submitted_output": {"text": ""}}`)})
	if err != nil {
		log.Fatal(err)
	}
	answer := res.StructuredContent.(map[string]any)
	fmt.Println("isError:", res.IsError)
	fmt.Println("result:", answer["result"])
	fmt.Println("next:", answer["next_actions"])
	// Output:
	// isError: false
	// result: fail
	// next: [map[action:repair_and_reverify using:hints]]
}
