package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcptools/lcp/tool"
)

// TestBoxedNpmServer starts the official filesystem server from the npm
// registry (installed by `npm ci` in testdata/node) in its box, through
// npx as docs/sandbox.md's entry does, with the workspace read-write: it
// reads and writes the workspace, and cannot see the folder next to it.
func TestBoxedNpmServer(t *testing.T) {
	requireSandbox(t)
	dir := needNode(t)
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "mcp-server-filesystem")); err != nil {
		t.Skip("server-filesystem is not installed: run `npm ci` in mcp/testdata/node")
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from the workspace"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("not yours"), 0o644); err != nil {
		t.Fatal(err)
	}
	// npx finds the package in the project folder it runs in (cwd), shown
	// read-only; its cache goes to the server's state folder (HOME).
	sc := ServerConfig{Alias: "fs", Type: TypeStdio, Command: "npx", Args: []string{"--no-install", "mcp-server-filesystem", ws},
		Dir: dir, Sandbox: &SandboxConfig{Workspace: WorkspaceReadWrite}}
	c := newClient(t, []ServerConfig{sc}, &ClientOptions{Workspace: ws, ConnectTimeout: 90 * time.Second})
	if err := c.Err("fs"); err != nil {
		t.Fatalf("the server did not start in its box: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	call := func(name string, args map[string]any) *tool.Result {
		t.Helper()
		raw, _ := json.Marshal(args)
		res, err := tool.Call(ctx, c, "fs::"+name, raw, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if res := call("read_text_file", map[string]any{"path": filepath.Join(ws, "hello.txt")}); !strings.Contains(res.Text(), "hello from the workspace") {
		t.Fatalf("read_text_file: %+v", res)
	}
	if res := call("write_file", map[string]any{"path": filepath.Join(ws, "new.txt"), "content": "written in the box"}); !res.Success {
		t.Fatalf("write_file: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "new.txt")); err != nil || string(b) != "written in the box" {
		t.Fatalf("the workspace file: %q %v", b, err)
	}
	// The server's own access check would refuse this path anyway: ask
	// with it added to nothing, and check the box by the file it cannot
	// see rather than by the server's answer.
	if res := call("read_text_file", map[string]any{"path": secret}); res.Success && strings.Contains(res.Text(), "not yours") {
		t.Fatalf("the server read a file outside its box: %+v", res)
	}
}
