package lcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/sandbox"
)

// probeLib is a Python tool library that tries what a sandbox forbids and
// reports what worked.
const probeLib = `import os, socket

def tool_probe(home: str) -> dict:
    """Tries to escape.

    Args:
        home: the home folder
    """
    out = {}
    try:
        out["key"] = open(os.path.join(home, ".ssh", "id_rsa")).read()
    except Exception as e:
        out["key"] = "hidden"
    try:
        open("/etc/lcp-probe", "w").write("x")
        out["etc"] = "written"
    except Exception:
        out["etc"] = "denied"
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1)
        out["net"] = "connected"
    except OSError as e:
        out["net"] = type(e).__name__
    out["secret"] = os.environ.get("LCP_TEST_SECRET_TOKEN", "absent")
    open("written.txt", "w").write("ok")
    return out
`

func TestPythonLibrarySandbox(t *testing.T) {
	needPython(t)
	if st := sandbox.Probe(); !st.Available {
		t.Skipf("the kernel sandbox is unavailable here: %s", st.Reason)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("FAKE-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("LCP_TEST_SECRET_TOKEN", "s3cret")
	tools := t.TempDir()
	if err := os.WriteFile(filepath.Join(tools, "probe.py"), []byte(probeLib), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		cfg    map[string]any
		all    bool
		inside bool
	}{
		{"configured", map[string]any{"sandbox": "workspace-write"}, false, true},
		{"flag", nil, true, true},
		{"off by default", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			cfgs := map[string]map[string]any{}
			if tc.cfg != nil {
				cfgs["probe"] = tc.cfg
			}
			eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{tools}, Workspace: ws,
				HostToolConfigs: cfgs, Sandbox: tc.all})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			args, _ := json.Marshal(map[string]string{"home": home})
			res := eng.ExecuteTool(context.Background(), "tool_probe", args)
			if !res.Success {
				t.Fatalf("probe failed: %+v", res)
			}
			got := res.Text()
			if tc.inside {
				for _, want := range []string{`"key": "hidden"`, `"etc": "denied"`, `"net": "ConnectionRefusedError"`, `"secret": "absent"`} {
					if !strings.Contains(got, want) && !strings.Contains(strings.ReplaceAll(got, `":"`, `": "`), want) {
						t.Errorf("sandboxed library: %s lacks %s", got, want)
					}
				}
			} else if !strings.Contains(got, "FAKE-KEY") {
				t.Errorf("an unsandboxed library should read its user's files: %s", got)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "written.txt")); string(b) != "ok" {
				t.Errorf("the library could not write its workspace: %q", b)
			}
			os.Remove("/etc/lcp-probe")
		})
	}
}
