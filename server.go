package main

import (
	"context"
	"fmt"
	"io"
)

// runServer serves MCP over stdio, or HTTP with --http.
func runServer(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	return fmt.Errorf("server modes are not built yet")
}
