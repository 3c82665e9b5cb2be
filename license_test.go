package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// apacheLicenseSHA256 is the SHA-256 of the Apache License 2.0 text as the
// ASF publishes it (https://www.apache.org/licenses/LICENSE-2.0.txt, also
// Debian's /usr/share/common-licenses/Apache-2.0).
const apacheLicenseSHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// TestLicense: LICENSE is the unmodified Apache License 2.0, and the README
// names it.
func TestLicense(t *testing.T) {
	b, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatalf("reading LICENSE: %v", err)
	}
	text := bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")) // a Windows checkout may convert line ends
	lines := strings.Split(string(text), "\n")
	if len(lines) < 4 || strings.TrimSpace(lines[1]) != "Apache License" || strings.TrimSpace(lines[2]) != "Version 2.0, January 2004" {
		t.Errorf("LICENSE does not open with the Apache License 2.0 title: %q", lines[:min(4, len(lines))])
	}
	for _, marker := range []string{"TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION", "END OF TERMS AND CONDITIONS",
		"APPENDIX: How to apply the Apache License to your work."} {
		if strings.Count(string(text), marker) != 1 {
			t.Errorf("LICENSE holds %q %d times, want once", marker, strings.Count(string(text), marker))
		}
	}
	sum := sha256.Sum256(text)
	if got := hex.EncodeToString(sum[:]); got != apacheLicenseSHA256 {
		t.Errorf("LICENSE's SHA-256 = %s, want %s: the text differs from the ASF's Apache License 2.0", got, apacheLicenseSHA256)
	}

	_, section, ok := strings.Cut(readme(t), "\n## Licence\n")
	if !ok {
		t.Fatal("README.md has no \"## Licence\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	if !strings.Contains(section, "[Apache License, Version 2.0](LICENSE)") {
		t.Errorf("README.md's Licence section does not link LICENSE as the Apache License, Version 2.0:\n%s", section)
	}
	if !strings.Contains(readme(t), "[Licence](#licence)") {
		t.Error("README.md's contents do not list the Licence section")
	}
}
