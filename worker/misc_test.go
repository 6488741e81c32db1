package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestInterpreterErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := filepath.Join(dir, "python-old")
	if err := os.WriteFile(old, []byte("#!/bin/sh\nprintf '/usr/bin/python3.8\\n3.8.10'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "python-broken")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'cannot start' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lib := Library{Path: filepath.Join(dir, "x.py")}
	for _, tc := range []struct {
		python, version, contains string
	}{
		{python: filepath.Join(dir, "missing", "python3"), contains: "no such file"},
		{python: "python3-not-installed-anywhere", contains: "executable file not found"},
		{python: old, version: "3.8.10", contains: "3.9 or newer"},
		{python: broken, contains: "cannot start"},
	} {
		p := NewPool(&Options{Python: tc.python})
		_, err := p.Call(context.Background(), &Request{Workspace: dir, Library: lib, Function: "tool_x"}, nil)
		var ie *InterpreterError
		if !errors.As(err, &ie) {
			t.Fatalf("%s: err = %v, want *InterpreterError", tc.python, err)
		}
		if ie.Version != tc.version || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: %v (version %q), want %q and version %q", tc.python, err, ie.Version, tc.contains, tc.version)
		}
		p.Close()
	}
}

func TestInvalidRequests(t *testing.T) {
	p := NewPool(nil)
	defer p.Close()
	lib := Library{Path: "/x/y.py"}
	for _, req := range []*Request{
		nil,
		{Workspace: "/tmp", Library: lib},
		{Workspace: "relative", Library: lib, Function: "tool_x"},
		{Workspace: "/tmp", Function: "tool_x"},
		{Workspace: "/tmp", Library: lib, Function: "tool_x", Args: json.RawMessage(`[1]`)},
		{Workspace: "/tmp", Library: lib, Function: "tool_x", Args: json.RawMessage(`{bad`)},
		{Workspace: "/tmp", Library: lib, Function: "tool_x", Context: json.RawMessage(`{`)},
	} {
		if _, err := p.Call(context.Background(), req, nil); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%+v: err = %v, want ErrInvalidRequest", req, err)
		}
	}
	requirePython(t)
	_, err := p.Call(context.Background(), &Request{Workspace: "/nonexistent-workspace", Library: lib, Function: "tool_x"}, nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing workspace: %v", err)
	}
}

const asyncLib = `
import asyncio

async def tool_forever():
    await asyncio.sleep(3600)

async def tool_shielded():
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pass

def tool_count():
    global N
    N = globals().get("N", 0) + 1
    return N
`

func TestAsyncCancellation(t *testing.T) {
	t.Parallel()
	p, _ := testPool(t, &Options{CancelGrace: 500 * time.Millisecond})
	lib := writeLib(t, "asy", asyncLib)
	ws := t.TempDir()
	wantValue(t, mustCall(t, p, ws, lib, "tool_count", "{}"), "1")
	// The task is cancelled at its await: the worker survives.
	_, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_forever", Timeout: 200 * time.Millisecond}, nil)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Killed {
		t.Fatalf("err = %v, want a timeout without a kill", err)
	}
	wantValue(t, mustCall(t, p, ws, lib, "tool_count", "{}"), "2")
	// A task that swallows cancellation costs its worker.
	_, err = p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_shielded", Timeout: 200 * time.Millisecond}, nil)
	if !errors.As(err, &te) || !te.Killed {
		t.Fatalf("err = %v, want a timeout with a kill", err)
	}
	r := mustCall(t, p, ws, lib, "tool_count", "{}")
	wantValue(t, r, "1")
	if !r.StateReset {
		t.Error("no state reset after the kill")
	}
}

func TestLoadDynamicCode(t *testing.T) {
	t.Parallel()
	p, _ := testPool(t, nil)
	ws := t.TempDir()
	code := "import math\nSTATE = []\ndef tool_fib(n: int):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    STATE.append(n)\n    return a\ndef helper():\n    pass\ndef tool_fib_prompt():\n    return 'Fibonacci numbers.'\ndef tool_calls():\n    return STATE\n"
	lib := Library{Path: "/dynamic/fib.py", Stem: "fib", Code: code}
	lr, err := p.Load(context.Background(), &Request{Workspace: ws, Library: lib}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lr.LoadError != nil || strings.Join(lr.Functions, ",") != "tool_fib,tool_fib_prompt,tool_calls" {
		t.Fatalf("load = %+v", lr)
	}
	wantValue(t, mustCall(t, p, ws, lib, "tool_fib", `{"n": 90}`), "2880067194370816120")
	wantValue(t, mustCall(t, p, ws, lib, "tool_fib_prompt", `{}`), `"Fibonacci numbers."`)
	wantValue(t, mustCall(t, p, ws, lib, "tool_calls", `{}`), `[90]`)

	bad := Library{Path: "/dynamic/bad.py", Stem: "bad", Code: "raise RuntimeError('rejected')\n"}
	lr, err = p.Load(context.Background(), &Request{Workspace: ws, Library: bad}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lr.LoadError == nil || lr.LoadError.Type != "RuntimeError" || lr.LoadError.Message != "rejected" {
		t.Fatalf("load of failing code = %+v", lr)
	}

	// New code under the same path is a new module; Release drops the old.
	lib2 := lib
	lib2.Code = "def tool_fib(n: int):\n    return -1\n"
	wantValue(t, mustCall(t, p, ws, lib2, "tool_fib", `{"n": 3}`), "-1")
	p.Release(lib)
	r := mustCall(t, p, ws, lib, "tool_calls", `{}`)
	wantValue(t, r, `[]`)
	if r.StateReset {
		t.Error("Release reported as a state reset")
	}
}

// TestHelperEngine is not a test: TestEngineKilled runs the test binary as
// an engine that it kills with SIGKILL.
func TestHelperEngine(t *testing.T) {
	if os.Getenv("LCP_WORKER_HELPER") == "" {
		t.Skip("helper process only")
	}
	p := NewPool(&Options{Env: []string{"LCP_TEST_TAG=" + os.Getenv("LCP_WORKER_HELPER"), "PYTHONDONTWRITEBYTECODE=1"}})
	lib := Library{Path: os.Getenv("LCP_WORKER_LIB")}
	ws := os.Getenv("LCP_WORKER_WS")
	if _, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_fork_child"}, nil); err != nil {
		t.Fatal(err)
	}
	go p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_gil_hog"}, nil)
	go p.Call(context.Background(), &Request{Workspace: t.TempDir(), Library: lib, Function: "tool_sleep"}, nil)
	// Two workers with their guardians, and the two sleeps.
	for len(taggedPids(os.Getenv("LCP_WORKER_HELPER"))) < 6 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	os.Stdout.WriteString("READY\n")
	time.Sleep(time.Hour)
}

// TestEngineKilled kills an engine with SIGKILL while its workers run busy
// tools and children that called setsid: nothing may survive.
func TestEngineKilled(t *testing.T) {
	requirePython(t)
	t.Parallel()
	tag := fmt.Sprintf("lcptest-engine-%d-%d", os.Getpid(), time.Now().UnixNano())
	lib := writeLib(t, "faults", faultLib)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperEngine$", "-test.v")
	cmd.Env = append(os.Environ(), "LCP_WORKER_HELPER="+tag, "LCP_WORKER_LIB="+lib.Path, "LCP_WORKER_WS="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		waitNoTagged(t, tag, hangAfter)
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "READY") {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the helper engine failed")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the helper engine did not get ready")
	}
	if n := len(taggedPids(tag)); n < 6 {
		t.Fatalf("%d tagged processes before the kill, want at least 6", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitNoTagged(t, tag, hangAfter)
}

var _ = filepath.Join

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	p, tag := testPool(t, &Options{IdleTimeout: 500 * time.Millisecond})
	lib := writeLib(t, "faults", faultLib)
	ws := t.TempDir()
	wantValue(t, mustCall(t, p, ws, lib, "tool_inc", "{}"), "1")
	// A call longer than the timeout keeps its worker.
	if _, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_loop", Timeout: 800 * time.Millisecond}, nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	wantValue(t, mustCall(t, p, ws, lib, "tool_inc", "{}"), "2")
	waitNoTagged(t, tag, hangAfter)
	r := mustCall(t, p, ws, lib, "tool_inc", "{}")
	wantValue(t, r, "1")
	if r.StateReset {
		t.Error("an idle stop reported as a state reset")
	}
}

// TestCompiledProgramReuse checks that later workers start from the program
// compiled by the first, and that a stale compiled program only costs a
// compile.
func TestCompiledProgramReuse(t *testing.T) {
	t.Parallel()
	p, _ := testPool(t, nil)
	ws := t.TempDir()
	a := writeLib(t, "a", "def tool_a():\n    return 'a'\n")
	wantValue(t, mustCall(t, p, ws, a, "tool_a", "{}"), `"a"`)
	code := p.compiledProgram()
	if len(code) < 1000 {
		t.Fatalf("compiled program of %d bytes", len(code))
	}
	b := writeLib(t, "b", "def tool_b():\n    return 'b'\n")
	wantValue(t, mustCall(t, p, ws, b, "tool_b", "{}"), `"b"`)

	p.interpMu.Lock()
	p.compiled = append([]byte("XXXX"), code[4:]...) // wrong magic number
	p.interpMu.Unlock()
	c := writeLib(t, "c", "def tool_c():\n    return 'c'\n")
	wantValue(t, mustCall(t, p, ws, c, "tool_c", "{}"), `"c"`)
}
