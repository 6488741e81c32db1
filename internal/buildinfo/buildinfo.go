// Package buildinfo says which lcp is running: its version, the commit it
// was built from and the Go toolchain that built it, read from the build
// information Go writes into every binary (runtime/debug.ReadBuildInfo).
// `lcp version`, `lcp --version`, the MCP serverInfo and clientInfo, and
// the SARIF output of `lcp check` all print Version, so that one string
// identifies a build everywhere.
//
//	fmt.Println(buildinfo.Version()) // v0.3.0, or v0.0.0-20261201171404-bcdfa0c37d93+dirty, or dev
//
// Where the version comes from, first found wins:
//
//   - the release script's -ldflags "-X github.com/lcptools/lcp/internal/buildinfo.version=v0.3.0";
//   - the module version Go stamps: the tag for `go install
//     github.com/lcptools/lcp/cmd/lcp@v0.3.0`, a pseudo-version made of the
//     commit's date and hash for a build in a git clone (with "+dirty" when
//     the tree had changes);
//   - lcp's version as a dependency, when lcp is a library in another
//     program;
//   - "dev" (go run, go test, a build outside version control).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// ModulePath is the path of lcp's Go module.
const ModulePath = "github.com/lcptools/lcp"

// Dev is the version of a build that carries none.
const Dev = "dev"

// version is set at link time by the release script (-ldflags -X).
var version string

// Info describes a build of lcp.
type Info struct {
	// Version identifies the build (see the package doc).
	Version string `json:"version"`
	// Commit is the full hash of the commit built, when the build was
	// made in a git clone.
	Commit string `json:"commit,omitempty"`
	// CommitTime is the commit's time (RFC 3339), with Commit.
	CommitTime string `json:"commit_time,omitempty"`
	// Modified reports that the clone had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

var (
	once sync.Once
	read Info
)

// Read returns the running binary's build information.
func Read() Info {
	once.Do(func() {
		bi, _ := debug.ReadBuildInfo()
		read = fromBuildInfo(bi, version)
		read.Platform = runtime.GOOS + "/" + runtime.GOARCH
	})
	return read
}

// Version returns the version string of the running binary.
func Version() string { return Read().Version }

// fromBuildInfo extracts an Info from Go's build information (nil when
// the binary has none) and the version set at link time.
func fromBuildInfo(bi *debug.BuildInfo, linked string) Info {
	in := Info{Version: linked, GoVersion: runtime.Version()}
	if bi == nil {
		if in.Version == "" {
			in.Version = Dev
		}
		return in
	}
	if bi.GoVersion != "" {
		in.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Commit = s.Value
		case "vcs.time":
			in.CommitTime = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	if in.Version == "" && bi.Main.Path == ModulePath {
		in.Version = moduleVersion(&bi.Main)
	}
	if in.Version == "" {
		for _, d := range bi.Deps {
			if d.Path == ModulePath {
				in.Version = moduleVersion(d)
				break
			}
		}
	}
	if in.Version == "" {
		in.Version = Dev
	}
	return in
}

// moduleVersion is a module's version, "" when Go did not stamp one.
func moduleVersion(m *debug.Module) string {
	if m.Replace != nil {
		m = m.Replace
	}
	if m.Version == "" || m.Version == "(devel)" {
		return ""
	}
	return m.Version
}

// String formats the information for `lcp version`, one fact a line:
//
//	lcp version v0.3.0
//	commit 1f0e3a9c2b7d (2026-12-01T17:14:04Z, modified)
//	go1.26.0 linux/amd64
func (in Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lcp version %s\n", in.Version)
	if in.Commit != "" {
		var notes []string
		if in.CommitTime != "" {
			notes = append(notes, in.CommitTime)
		}
		if in.Modified {
			notes = append(notes, "modified")
		}
		fmt.Fprintf(&b, "commit %s", in.Commit)
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s %s\n", in.GoVersion, in.Platform)
	return b.String()
}
