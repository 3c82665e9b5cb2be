// Package release stamps the repository's MCP Registry entry (server.json)
// and Claude Desktop bundle manifest (mcpb/manifest.json) with the version
// of one release, as the release workflow publishes them. The files in the
// repository carry the next version and a placeholder bundle digest; the
// workflow runs the stamp command (./internal/release/stamp) on them.
package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

// The names every release artefact is published under.
const (
	// ServerName is the MCP Registry name, also the image's
	// io.modelcontextprotocol.server.name label.
	ServerName = "io.github.verifier-dev/verifier"
	// Module is the Go module path (the registry's "go" package).
	Module = "github.com/verifier-dev/verifier"
	// Image is the container image repository, tagged with the version.
	Image = "ghcr.io/verifier-dev/verifier"
	// DownloadBase is where a tag's release assets are downloaded from.
	DownloadBase = "https://github.com/verifier-dev/verifier/releases/download"
)

// BundleName is the Claude Desktop bundle's file name for version.
func BundleName(version string) string { return "verifier-" + version + ".mcpb" }

// BundleURL is the bundle's download URL for version (tag v+version).
func BundleURL(version string) string {
	return DownloadBase + "/v" + version + "/" + BundleName(version)
}

// semver is a release version as the tags name it, without the "v":
// MAJOR.MINOR.PATCH and an optional pre-release.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

var sha256Hex = regexp.MustCompile(`^[a-f0-9]{64}$`)

// StampServer returns server.json (doc) for version: the entry's version,
// each package's version and identifier, and the bundle's fileSha256
// (lower-case hex of the .mcpb file's SHA-256).
func StampServer(doc []byte, version, bundleSHA256 string) ([]byte, error) {
	if !semver.MatchString(version) {
		return nil, fmt.Errorf("stamping server.json: version %q is not MAJOR.MINOR.PATCH[-PRERELEASE] (give the tag without its v)", version)
	}
	if !sha256Hex.MatchString(bundleSHA256) {
		return nil, fmt.Errorf("stamping server.json: the bundle digest is not 64 lower-case hex digits")
	}
	var s map[string]any
	if err := decode(doc, &s); err != nil {
		return nil, fmt.Errorf("stamping server.json: %w", err)
	}
	if s["name"] != ServerName {
		return nil, fmt.Errorf("stamping server.json: its name is %v, not %s", s["name"], ServerName)
	}
	s["version"] = version
	pkgs, _ := s["packages"].([]any)
	seen := map[string]bool{}
	for i, p := range pkgs {
		pkg, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("stamping server.json: /packages/%d is not an object", i)
		}
		kind, _ := pkg["registryType"].(string)
		switch kind {
		case "go":
			pkg["identifier"] = Module
			pkg["version"] = "v" + version // a Go module version, as the module proxy names it
		case "mcpb":
			pkg["identifier"] = BundleURL(version)
			pkg["version"] = version
			pkg["fileSha256"] = bundleSHA256
		case "oci":
			pkg["identifier"] = Image + ":" + version
			pkg["version"] = version
		default:
			return nil, fmt.Errorf("stamping server.json: /packages/%d has registryType %q, which the release does not publish", i, kind)
		}
		seen[kind] = true
	}
	for _, kind := range []string{"go", "mcpb", "oci"} {
		if !seen[kind] {
			return nil, fmt.Errorf("stamping server.json: no %s package", kind)
		}
	}
	return encode(s)
}

// StampManifest returns the bundle manifest (doc) for version.
func StampManifest(doc []byte, version string) ([]byte, error) {
	if !semver.MatchString(version) {
		return nil, fmt.Errorf("stamping manifest.json: version %q is not MAJOR.MINOR.PATCH[-PRERELEASE] (give the tag without its v)", version)
	}
	var m map[string]any
	if err := decode(doc, &m); err != nil {
		return nil, fmt.Errorf("stamping manifest.json: %w", err)
	}
	if _, ok := m["manifest_version"]; !ok {
		return nil, fmt.Errorf("stamping manifest.json: no manifest_version, so not a bundle manifest")
	}
	m["version"] = version
	return encode(m)
}

// decode reads one JSON object, numbers kept as written.
func decode(doc []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if d.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// encode writes v indented, keys sorted, without HTML escaping.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	return b.Bytes(), nil
}
