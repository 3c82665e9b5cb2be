package release_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/engine/schema"
	"github.com/verifier-dev/verifier/internal/release"
	"github.com/verifier-dev/verifier/tools/contract"
)

// root is the repository root, seen from this package's folder.
const root = "../.."

func read(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	return v
}

// registrySchema compiles the MCP Registry's published server.json schema
// (testdata/mcp-registry, see its SOURCE) with the project's own engine.
func registrySchema(t *testing.T) *schema.Schema {
	t.Helper()
	s, err := schema.Compile(decode(t, read(t, "testdata/mcp-registry/server.schema.json")), nil)
	if err != nil {
		t.Fatalf("compiling the registry's server.schema.json: %v", err)
	}
	return s
}

func failures(t *testing.T, s *schema.Schema, doc any) []string {
	t.Helper()
	res, err := s.Evaluate(doc)
	if err != nil {
		t.Fatalf("evaluating: %v", err)
	}
	var out []string
	for _, f := range res.Failures {
		out = append(out, f.InstancePath+" "+f.Keyword+": "+f.Sentence())
	}
	if res.Valid != (len(out) == 0) {
		t.Fatalf("Valid=%v with failures %q", res.Valid, out)
	}
	return out
}

const bundleDigest = "4f2b6c1d9e8a7b3c5d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e"

// TestServerJSONValidates checks the repository's server.json, and the copy
// the release workflow stamps from it, against the registry's schema.
func TestServerJSONValidates(t *testing.T) {
	s := registrySchema(t)
	doc := read(t, "server.json")
	if f := failures(t, s, decode(t, doc)); len(f) > 0 {
		t.Errorf("server.json fails the registry's schema:\n%s", strings.Join(f, "\n"))
	}
	stamped, err := release.StampServer(doc, "1.4.0-rc.1", bundleDigest)
	if err != nil {
		t.Fatal(err)
	}
	if f := failures(t, s, decode(t, stamped)); len(f) > 0 {
		t.Errorf("the stamped server.json fails the registry's schema:\n%s", strings.Join(f, "\n"))
	}
}

// TestServerJSONBrokenCopies checks that the schema, as compiled here,
// refuses what the registry refuses: each broken copy of server.json fails
// at the place it was broken.
func TestServerJSONBrokenCopies(t *testing.T) {
	s := registrySchema(t)
	doc := read(t, "server.json")
	for _, tc := range []struct {
		name   string
		break_ func(m map[string]any)
		at     string
	}{
		{"name without a namespace", func(m map[string]any) { m["name"] = "verifier" }, "/name"},
		{"description over 100 characters", func(m map[string]any) { m["description"] = strings.Repeat("x", 101) }, "/description"},
		{"no version", func(m map[string]any) { delete(m, "version") }, ""},
		{"package version latest", func(m map[string]any) { pkg(m, "go")["version"] = "latest" }, "/packages/0/version"},
		{"package without transport", func(m map[string]any) { delete(pkg(m, "oci"), "transport") }, "/packages/2"},
		{"bundle digest not hex", func(m map[string]any) { pkg(m, "mcpb")["fileSha256"] = "sha256:abc" }, "/packages/1/fileSha256"},
		{"remote URL not http(s)", func(m map[string]any) { m["remotes"].([]any)[0].(map[string]any)["url"] = "ftp://{host}/mcp" }, "/remotes/0"},
		{"environment variable without a name", func(m map[string]any) {
			delete(pkg(m, "go")["environmentVariables"].([]any)[0].(map[string]any), "name")
		}, "/packages/0/environmentVariables/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := decode(t, doc).(map[string]any)
			tc.break_(m)
			f := failures(t, s, m)
			if len(f) == 0 {
				t.Fatal("the broken copy passes the registry's schema")
			}
			if !slices.ContainsFunc(f, func(x string) bool { return strings.HasPrefix(x, tc.at+" ") }) {
				t.Errorf("no failure at %q: %q", tc.at, f)
			}
		})
	}
}

// pkg is server.json's package of registryType kind.
func pkg(m map[string]any, kind string) map[string]any {
	for _, p := range m["packages"].([]any) {
		if p.(map[string]any)["registryType"] == kind {
			return p.(map[string]any)
		}
	}
	panic("no " + kind + " package")
}

// TestReleaseNamesAgree checks that server.json, the bundle manifest, the
// Containerfile and .goreleaser.yaml name the same server, version, image
// and tools, as the registry checks when it publishes (the image's label
// must equal the entry's name).
func TestReleaseNamesAgree(t *testing.T) {
	srv := decode(t, read(t, "server.json")).(map[string]any)
	man := decode(t, read(t, "mcpb/manifest.json")).(map[string]any)
	containerfile := string(read(t, "Containerfile"))
	goreleaser := string(read(t, ".goreleaser.yaml"))

	version, _ := srv["version"].(string)
	if srv["name"] != release.ServerName {
		t.Errorf("server.json name %v, want %s", srv["name"], release.ServerName)
	}
	if man["version"] != version {
		t.Errorf("manifest.json version %v, server.json %s", man["version"], version)
	}
	for kind, want := range map[string]string{
		"go":   release.Module,
		"mcpb": release.BundleURL(version),
		"oci":  release.Image + ":" + version,
	} {
		p := pkg(srv, kind)
		if p["identifier"] != want {
			t.Errorf("%s package identifier %v, want %s", kind, p["identifier"], want)
		}
		wantVersion := version
		if kind == "go" {
			wantVersion = "v" + version
		}
		if p["version"] != wantVersion {
			t.Errorf("%s package version %v, want %s", kind, p["version"], wantVersion)
		}
	}

	label := regexp.MustCompile(`io\.modelcontextprotocol\.server\.name="([^"]*)"`).FindStringSubmatch(containerfile)
	if label == nil || label[1] != release.ServerName {
		t.Errorf("Containerfile label io.modelcontextprotocol.server.name = %q, want %s", label, release.ServerName)
	}
	for _, line := range []string{
		`USER 65532:65532`,
		`VOLUME ["/data"]`,
		`ENTRYPOINT ["/verifier"]`,
		`CMD ["--http", "0.0.0.0:8080", "--data-dir", "/data"]`,
		`EXPOSE 8080`,
	} {
		if !strings.Contains(containerfile, "\n"+line+"\n") {
			t.Errorf("Containerfile lacks the line %s", line)
		}
	}
	for _, want := range []string{
		"io.modelcontextprotocol.server.name: " + release.ServerName,
		"- " + release.Image + "\n",
		"dockerfile: Containerfile",
		`name_template: "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}"`,
		"name_template: checksums.txt",
		"-X main.version={{.Version}}",
	} {
		if !strings.Contains(goreleaser, want) {
			t.Errorf(".goreleaser.yaml lacks %q", want)
		}
	}

	// The bundle lists the tools the server has.
	var listed []string
	for _, tool := range man["tools"].([]any) {
		listed = append(listed, tool.(map[string]any)["name"].(string))
	}
	var want []string
	for _, tool := range contract.Tools() {
		want = append(want, tool.Name)
	}
	slices.Sort(listed)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("manifest.json tools %q, the server's %q", listed, want)
	}
}

// TestStampServer checks every field a release stamps.
func TestStampServer(t *testing.T) {
	out, err := release.StampServer(read(t, "server.json"), "2.0.1", bundleDigest)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, out).(map[string]any)
	if m["version"] != "2.0.1" {
		t.Errorf("version %v", m["version"])
	}
	for _, tc := range []struct{ kind, field, want string }{
		{"go", "identifier", "github.com/verifier-dev/verifier"},
		{"go", "version", "v2.0.1"},
		{"mcpb", "identifier", "https://github.com/verifier-dev/verifier/releases/download/v2.0.1/verifier-2.0.1.mcpb"},
		{"mcpb", "version", "2.0.1"},
		{"mcpb", "fileSha256", bundleDigest},
		{"oci", "identifier", "ghcr.io/verifier-dev/verifier:2.0.1"},
		{"oci", "version", "2.0.1"},
	} {
		if got := pkg(m, tc.kind)[tc.field]; got != tc.want {
			t.Errorf("%s %s = %v, want %s", tc.kind, tc.field, got, tc.want)
		}
	}
	// Everything else is kept.
	orig := decode(t, read(t, "server.json")).(map[string]any)
	for _, k := range []string{"remotes", "_meta", "repository", "description"} {
		a, _ := json.Marshal(orig[k])
		b, _ := json.Marshal(m[k])
		if !bytes.Equal(a, b) {
			t.Errorf("%s changed: %s -> %s", k, a, b)
		}
	}
}

func TestStampRejects(t *testing.T) {
	doc := read(t, "server.json")
	for _, tc := range []struct {
		name, version, digest string
		doc                   []byte
	}{
		{"version with v", "v1.2.3", bundleDigest, doc},
		{"version latest", "latest", bundleDigest, doc},
		{"version range", "^1.2.3", bundleDigest, doc},
		{"empty version", "", bundleDigest, doc},
		{"digest upper case", "1.2.3", strings.ToUpper(bundleDigest), doc},
		{"digest short", "1.2.3", bundleDigest[:63], doc},
		{"not JSON", "1.2.3", bundleDigest, []byte(`{"name":`)},
		{"two values", "1.2.3", bundleDigest, append(slices.Clone(doc), []byte(" {}")...)},
		{"another server", "1.2.3", bundleDigest, bytes.Replace(doc, []byte(`"io.github.verifier-dev/verifier"`), []byte(`"io.github.other/x"`), 1)},
		{"unknown package type", "1.2.3", bundleDigest, bytes.Replace(doc, []byte(`"registryType": "go"`), []byte(`"registryType": "npm"`), 1)},
		{"a package missing", "1.2.3", bundleDigest, bytes.Replace(doc, []byte(`"registryType": "oci"`), []byte(`"registryType": "go"`), 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := release.StampServer(tc.doc, tc.version, tc.digest); err == nil {
				t.Error("stamped")
			}
		})
	}
	if _, err := release.StampManifest(doc, "1.2.3"); err == nil {
		t.Error("StampManifest took server.json")
	}
	if _, err := release.StampManifest(read(t, "mcpb/manifest.json"), "1.2"); err == nil {
		t.Error("StampManifest took version 1.2")
	}
}

func TestStampManifest(t *testing.T) {
	orig := read(t, "mcpb/manifest.json")
	out, err := release.StampManifest(orig, "3.1.4")
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, out).(map[string]any)
	o := decode(t, orig).(map[string]any)
	if m["version"] != "3.1.4" {
		t.Errorf("version %v", m["version"])
	}
	o["version"] = "3.1.4"
	a, _ := json.Marshal(o)
	b, _ := json.Marshal(m)
	if !bytes.Equal(a, b) {
		t.Errorf("more than the version changed:\n%s\n%s", a, b)
	}
}
