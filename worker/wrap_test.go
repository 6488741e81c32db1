package worker

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestWrap checks the hook that rewrites a worker's command before it
// starts: what it sets reaches the worker, its release runs once per start,
// and its error stops the worker from starting.
func TestWrap(t *testing.T) {
	var released int
	var sawLib Library
	p, _ := testPool(t, &Options{Wrap: func(cmd *exec.Cmd, lib Library, ws string, _ func() []context.Context) (func(), error) {
		sawLib = lib
		if strings.Contains(lib.Path, "refused") {
			return nil, errors.New("no sandbox for you")
		}
		cmd.Env = append(cmd.Env, "LCP_WRAPPED="+ws)
		return func() { released++ }, nil
	}})
	lib := writeLib(t, "wrapped", "import os\ndef tool_env():\n    return {'wrapped': os.environ.get('LCP_WRAPPED')}\n")
	ws := t.TempDir()
	r := mustCall(t, p, ws, lib, "tool_env", `{}`)
	if !strings.Contains(string(r.Value), ws) || released != 1 || sawLib.Path != lib.Path {
		t.Errorf("value %s, released %d, lib %+v", r.Value, released, sawLib)
	}
	refused := writeLib(t, "refused", "def tool_x():\n    return 1\n")
	_, err := p.Call(context.Background(), &Request{Workspace: ws, Library: refused, Function: "tool_x"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no sandbox for you") {
		t.Errorf("a refused wrap: err = %v", err)
	}
}
