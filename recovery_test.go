package lcp_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lcptools/lcp"
)

// An engine opening a workspace removes what a dead lcp process's apply
// left there, and says so.
func TestEngineRecoversTheWorkspace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("copy-on-write runs need Linux")
	}
	ws := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	// No process started at the last tick a start time can name.
	stale := filepath.Join(ws, ".lcp-txn-1-18446744073709551615-ab")
	if err := os.MkdirAll(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	e, err := lcp.New(context.Background(), &lcp.Config{Workspace: ws, ToolFiles: []string{writeTool(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r := e.Recovery()
	if r == nil || !strings.Contains(strings.Join(r.Removed, "\n"), stale) {
		t.Errorf("recovery %+v does not name %s", r, stale)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale staging folder is still there")
	}
}

func writeTool(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "tools.py")
	if err := os.WriteFile(p, []byte("def tool_hello() -> str:\n    \"\"\"Say hello.\"\"\"\n    return 'hello'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
