// Command stamp writes server.json or the bundle's manifest.json stamped for
// one release to standard output; the release workflow runs it.
//
//	go run ./internal/release/stamp -version 1.2.3 mcpb/manifest.json
//	go run ./internal/release/stamp -version 1.2.3 -bundle dist/verifier-1.2.3.mcpb server.json
//
// With -bundle the file is server.json and the bundle's SHA-256 goes into its
// mcpb package; without it the file is a bundle manifest.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/verifier-dev/verifier/internal/release"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stamp:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("stamp", flag.ContinueOnError)
	version := fs.String("version", "", "the release version, the tag without its v")
	bundle := fs.String("bundle", "", "the .mcpb file whose SHA-256 server.json names (server.json only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("give one file: server.json or a manifest.json")
	}
	doc, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("reading the file to stamp: %w", err)
	}
	var out []byte
	if *bundle != "" {
		b, err := os.ReadFile(*bundle)
		if err != nil {
			return fmt.Errorf("reading the bundle: %w", err)
		}
		sum := sha256.Sum256(b)
		out, err = release.StampServer(doc, *version, hex.EncodeToString(sum[:]))
		if err != nil {
			return err
		}
	} else {
		out, err = release.StampManifest(doc, *version)
		if err != nil {
			return err
		}
	}
	_, err = stdout.Write(out)
	return err
}
