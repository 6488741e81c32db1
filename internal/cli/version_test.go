package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lcptools/lcp/internal/buildinfo"
)

func TestVersionFlags(t *testing.T) {
	var got *VersionOptions
	if err := parse(t, NewCmdVersion(testEnv(), func(o *VersionOptions) error { got = o; return nil }), "--json"); err != nil {
		t.Fatal(err)
	}
	if !got.json {
		t.Errorf("version options %+v", got)
	}
	if err := parse(t, NewCmdVersion(testEnv(), func(*VersionOptions) error { t.Error("ran"); return nil }), "extra"); ExitCode(err) != ExitUsage {
		t.Errorf("lcp version extra: %v, want a usage error", err)
	}
}

// lcp version and lcp --version print the same lines: the version, the
// commit when known, the Go version and the platform.
func TestVersion(t *testing.T) {
	out, errOut, code := run(t, "", "version")
	if code != 0 || errOut != "" {
		t.Fatalf("lcp version: exit %d, %q", code, errOut)
	}
	in := buildinfo.Read()
	if !strings.HasPrefix(out, "lcp version "+in.Version+"\n") || !strings.HasSuffix(out, in.GoVersion+" "+in.Platform+"\n") {
		t.Errorf("lcp version = %q", out)
	}
	flag, _, code := run(t, "", "--version")
	if code != 0 || flag != out {
		t.Errorf("lcp --version = %q (exit %d), want %q", flag, code, out)
	}
	out, _, code = run(t, "", "version", "--json")
	var got buildinfo.Info
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got != in {
		t.Errorf("lcp version --json = %s (exit %d), want %+v", out, code, in)
	}
}
