package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "bcdfa0c37d93cdfd250212c8d3138a03572bb90b"},
		{Key: "vcs.time", Value: "2026-12-01T17:14:04Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tt := range []struct {
		name   string
		bi     *debug.BuildInfo
		linked string
		want   Info
	}{
		{"no build info", nil, "", Info{Version: Dev}},
		{"no build info, linked", nil, "v1.0.0", Info{Version: "v1.0.0"}},
		{"go install @tag", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: ModulePath, Version: "v0.3.0"}},
			"", Info{Version: "v0.3.0", GoVersion: "go1.26.0"}},
		{"clone with changes", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: ModulePath, Version: "v0.0.0-20261201171404-bcdfa0c37d93+dirty"}, Settings: vcs},
			"", Info{Version: "v0.0.0-20261201171404-bcdfa0c37d93+dirty", Commit: "bcdfa0c37d93cdfd250212c8d3138a03572bb90b",
				CommitTime: "2026-12-01T17:14:04Z", Modified: true, GoVersion: "go1.26.0"}},
		{"release script", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: ModulePath, Version: "(devel)"}},
			"v0.4.0", Info{Version: "v0.4.0", GoVersion: "go1.26.0"}},
		{"go run", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: ModulePath, Version: "(devel)"}},
			"", Info{Version: Dev, GoVersion: "go1.26.0"}},
		{"a dependency", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "example.com/host", Version: "v9.9.9"},
			Deps: []*debug.Module{{Path: "golang.org/x/sys", Version: "v0.1.0"}, {Path: ModulePath, Version: "v0.2.0"}}},
			"", Info{Version: "v0.2.0", GoVersion: "go1.26.0"}},
		{"a replaced dependency", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "example.com/host"},
			Deps: []*debug.Module{{Path: ModulePath, Version: "v0.2.0", Replace: &debug.Module{Path: "../lcp"}}}},
			"", Info{Version: Dev, GoVersion: "go1.26.0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo(tt.bi, tt.linked)
			if tt.bi == nil {
				got.GoVersion = "" // the running toolchain's
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestString(t *testing.T) {
	in := Info{Version: "v0.3.0", Commit: "bcdfa0c3", CommitTime: "2026-12-01T17:14:04Z", Modified: true, GoVersion: "go1.26.0", Platform: "linux/amd64"}
	want := "lcp version v0.3.0\ncommit bcdfa0c3 (2026-12-01T17:14:04Z, modified)\ngo1.26.0 linux/amd64\n"
	if got := in.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	in = Info{Version: Dev, GoVersion: "go1.26.0", Platform: "windows/arm64"}
	if got, want := in.String(), "lcp version dev\ngo1.26.0 windows/arm64\n"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// The running test binary has some version and its platform.
func TestRead(t *testing.T) {
	in := Read()
	if in.Version == "" || in.GoVersion == "" || in.Platform == "" || Version() != in.Version {
		t.Errorf("Read() = %+v", in)
	}
}
