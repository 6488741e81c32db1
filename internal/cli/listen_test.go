package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPortInUse: serving on a port another program holds is a usage
// error that names the flag and says how to get a free port.
func TestPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"serve", "--tools", t.TempDir(), "--addr", addr}, "--addr"},
		{[]string{"mcp", "--tools", t.TempDir(), "--http", addr}, "--http"},
	} {
		out, errOut, code := run(t, "", c.args...)
		want := "lcp: " + c.flag + " " + addr + ": the port is in use by another program; stop it, choose another port, or give " + c.flag + " 127.0.0.1:0 for any free one"
		if code != ExitUsage || !strings.HasPrefix(errOut, want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, errOut, ExitUsage, want)
		}
	}
}

// TestNoPython: a Python tool without an interpreter names --python, and
// the failure is in words, not a status number.
func TestNoPython(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.py"), []byte("def tool_x() -> str:\n    \"\"\"X.\"\"\"\n    return 'x'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "", "call", "--tools", dir, "--python", "no-such-python3", "tool_x")
	if code != ExitEngine || !strings.HasPrefix(errOut, "failed: ") || !strings.Contains(errOut, "lcp: Python tools need Python 3.9 or newer: install it, or name the interpreter with --python PATH") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
