package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// buildDescription is what `verifier version` prints.
type buildDescription struct {
	Version  string // verifier_version, as every answer carries it
	Commit   string // the source commit, "" when unknown
	Date     string // the stamped build date, else the commit's time (vcs.time); "" when unknown
	Modified bool   // the checkout had uncommitted changes
	Go       string // the Go release that built the binary
	Platform string // GOOS/GOARCH
}

// stamp holds the values a release build sets with -ldflags -X.
type stamp struct{ version, commit, date string }

// describeBuild combines the ldflags stamp with the binary's build info
// (nil when the binary has none): a stamped value wins over the VCS data
// the go command records (vcs.revision, vcs.time, vcs.modified), which
// `go run` and -buildvcs=false leave out.
func describeBuild(s stamp, info *debug.BuildInfo) buildDescription {
	d := buildDescription{Version: s.version, Commit: s.commit, Date: s.date,
		Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info == nil {
		if d.Version == "" {
			d.Version = sourceVersion
		}
		return d
	}
	if d.Version == "" {
		d.Version = versionOf(info)
	}
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			if d.Commit == "" {
				d.Commit = kv.Value
			}
		case "vcs.time":
			if d.Date == "" {
				d.Date = kv.Value
			}
		case "vcs.modified":
			d.Modified = kv.Value == "true"
		}
	}
	return d
}

// thisBuild describes the running binary.
func thisBuild() buildDescription {
	info, _ := debug.ReadBuildInfo() // nil when the binary carries none
	return describeBuild(stamp{version, commit, date}, info)
}

// write prints the description, one "name: value" line each after the
// first, which is "verifier VERSION".
func (d buildDescription) write(w io.Writer) error {
	unknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	c := unknown(d.Commit)
	if d.Modified {
		c += " (with uncommitted changes)"
	}
	_, err := fmt.Fprintf(w, "verifier %s\ncommit:   %s\ndate:     %s\ngo:       %s\nplatform: %s\n",
		d.Version, c, unknown(d.Date), d.Go, d.Platform)
	return err
}

// versionHelp is `verifier version`'s help.
var versionHelp = commandHelp{
	usage: "usage: verifier version    (or verifier --version)",
	about: "Prints the version (verifier_version in every answer), the commit the binary was built from\n" +
		"and its date, the Go release that built it, and the operating system and architecture.",
}

// runVersion is `verifier version`.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	if err := parseFlags(fs, args, versionHelp, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(stderr, versionHelp)
	}
	return thisBuild().write(stdout)
}
