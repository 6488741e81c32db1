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
	p, _ := testPool(t, &Options{Wrap: func(cmd *exec.Cmd, lib Library, ws string, _ func() []context.Context) (Wrapped, error) {
		sawLib = lib
		if strings.Contains(lib.Path, "refused") {
			return Wrapped{}, errors.New("no sandbox for you")
		}
		cmd.Env = append(cmd.Env, "LCP_WRAPPED="+ws)
		return Wrapped{Started: func() { released++ }}, nil
	}})
	lib := writeLib(t, "wrapped", "import os\ndef tool_env():\n    return {'wrapped': os.environ.get('LCP_WRAPPED')}\n")
	ws := t.TempDir()
	r := mustCall(t, p, ws, lib, "tool_env", `{}`)
	if !strings.Contains(string(r.Value), ws) || released != 1 || sawLib.Path != lib.Path {
		t.Errorf("value %s, released %d, lib %+v", r.Value, released, sawLib)
	}
	// The call hooks: one start and one end per call (the load included),
	// and an error from the end fails the call with it.
	var starts, ends int
	var fail error
	hooked, _ := testPool(t, &Options{Wrap: func(*exec.Cmd, Library, string, func() []context.Context) (Wrapped, error) {
		return Wrapped{CallStarted: func() { starts++ }, CallEnded: func() error { ends++; return fail }}, nil
	}})
	hlib := writeLib(t, "hooked", "def tool_one():\n    return 1\n")
	for range 2 {
		mustCall(t, hooked, ws, hlib, "tool_one", `{}`)
	}
	if starts != ends || starts < 2 {
		t.Errorf("%d starts, %d ends for two calls", starts, ends)
	}
	pidLib := writeLib(t, "hookedpid", "import os\ndef tool_pid():\n    return os.getpid()\n")
	before := mustCall(t, hooked, ws, pidLib, "tool_pid", `{}`)
	fail = errors.New("over the budget")
	if _, err := hooked.Call(context.Background(), &Request{Workspace: ws, Library: pidLib, Function: "tool_pid"}, nil); !errors.Is(err, fail) {
		t.Errorf("a call whose end fails: err = %v", err)
	}
	// The process whose call went over is ended at once (the hook does
	// not end it here, as a sandbox would): the next call, made before
	// its death could be noticed, runs in a fresh worker.
	fail = nil
	if after := mustCall(t, hooked, ws, pidLib, "tool_pid", `{}`); string(after.Value) == string(before.Value) {
		t.Errorf("the call after the one over the budget ran in the same worker (pid %s)", after.Value)
	}
	refused := writeLib(t, "refused", "def tool_x():\n    return 1\n")
	_, err := p.Call(context.Background(), &Request{Workspace: ws, Library: refused, Function: "tool_x"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no sandbox for you") {
		t.Errorf("a refused wrap: err = %v", err)
	}
}
