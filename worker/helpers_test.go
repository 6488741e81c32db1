package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// requirePython skips the test when no python3 is installed.
func requirePython(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

var tagSeq atomic.Int64

// testPool returns a pool whose workers carry a unique environment tag, so
// that every process they (and their tools) start can be found in /proc.
// At cleanup it closes the pool and fails if a tagged process survives.
func testPool(t testing.TB, opts *Options) (*Pool, string) {
	t.Helper()
	requirePython(t)
	tag := fmt.Sprintf("lcptest-%d-%d", os.Getpid(), tagSeq.Add(1))
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Env = append(o.Env, "LCP_TEST_TAG="+tag, "PYTHONDONTWRITEBYTECODE=1")
	if o.StartTimeout == 0 {
		// The 30 s default is a user's budget for a cold start; a test
		// that is not about it must not fail on a machine busy enough
		// to stretch python3's start past it (the interpreter probe was
		// killed at 30 s under the whole suite at load 20).
		o.StartTimeout = hangAfter
	}
	p := NewPool(&o)
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		waitNoTagged(t, tag, hangAfter)
	})
	return p, tag
}

// taggedPids lists live processes whose environment holds tag.
func taggedPids(tag string) []int {
	want := []byte("LCP_TEST_TAG=" + tag + "\x00")
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// hangAfter is how long a test waits for something that must happen
// before it calls it a hang: far beyond the expected time, so that a busy
// machine never trips it (a passing wait ends as soon as it holds).
const hangAfter = 2 * time.Minute

func waitNoTagged(t testing.TB, tag string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		pids := taggedPids(tag)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var desc []string
			for _, pid := range pids {
				cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				desc = append(desc, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
			}
			t.Errorf("processes left behind: %s", strings.Join(desc, "; "))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writeLib writes a library file into a fresh directory and returns it.
func writeLib(t testing.TB, name, src string) Library {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name+".py")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Library{Path: path, Stem: name}
}

// call runs fn with args (a JSON object) and fails the test on an engine
// error.
func mustCall(t testing.TB, p *Pool, ws string, lib Library, fn, args string) *Reply {
	t.Helper()
	r, err := p.Call(context.Background(), &Request{CallID: fn, Workspace: ws, Library: lib, Function: fn, Args: json.RawMessage(args)}, nil)
	if err != nil {
		t.Fatalf("call %s: %v", fn, err)
	}
	return r
}

// wantValue asserts that a reply holds the JSON value want.
func wantValue(t testing.TB, r *Reply, want string) {
	t.Helper()
	if r.Exception != nil || r.LoadError != nil || r.NotModuleLevel {
		t.Fatalf("reply is a failure: exception=%+v load=%+v notModuleLevel=%v", r.Exception, r.LoadError, r.NotModuleLevel)
	}
	if !jsonEqual(r.Value, []byte(want)) {
		t.Fatalf("value mismatch:\n got %s\nwant %s", r.Value, want)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// fakeHost records requests and answers them from its fields.
type fakeHost struct {
	mu        sync.Mutex
	confirms  []ConfirmRequest
	interacts []string
	decision  string
	answer    *string
	block     chan struct{} // when set, Confirm waits on it or the context
	ctxErr    error
}

func (h *fakeHost) Confirm(ctx context.Context, r ConfirmRequest) (string, string) {
	h.mu.Lock()
	h.confirms = append(h.confirms, r)
	block := h.block
	h.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			h.mu.Lock()
			h.ctxErr = ctx.Err()
			h.mu.Unlock()
			return "reject", "cancelled"
		}
	}
	return h.decision, "because " + r.Label
}

func (h *fakeHost) Interact(ctx context.Context, request json.RawMessage) *string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.interacts = append(h.interacts, string(request))
	return h.answer
}

func (h *fakeHost) ExecuteTool(ctx context.Context, name string, params json.RawMessage) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"success":true,"status_code":200,"output":{"ran":%q,"params":%s}}`, name, params))
}

func (h *fakeHost) Generate(ctx context.Context, r GenerateRequest) (string, error) {
	if r.Prompt == "fail" {
		return "", fmt.Errorf("model unavailable")
	}
	return "generated:" + r.Prompt + ":" + string(r.Options), nil
}

func (h *fakeHost) Discussion(ctx context.Context) json.RawMessage {
	return json.RawMessage(`[{"role":"user","content":"hi"}]`)
}

// eventHost is a fakeHost that also takes a call's output, progress, log
// records and service requests.
type eventHost struct {
	fakeHost
	emu      sync.Mutex
	outputs  []Output
	progress []Progress
	logs     []LogRecord
	services []string
	slow     time.Duration // each event takes this long to deliver
}

func (h *eventHost) Output(o Output) {
	time.Sleep(h.slow)
	h.emu.Lock()
	defer h.emu.Unlock()
	h.outputs = append(h.outputs, o)
}

func (h *eventHost) Progress(ctx context.Context, p Progress) {
	time.Sleep(h.slow)
	h.emu.Lock()
	defer h.emu.Unlock()
	h.progress = append(h.progress, p)
}

func (h *eventHost) Log(ctx context.Context, r LogRecord) {
	time.Sleep(h.slow)
	h.emu.Lock()
	defer h.emu.Unlock()
	h.logs = append(h.logs, r)
}

func (h *eventHost) Service(ctx context.Context, name string, params json.RawMessage) (json.RawMessage, error) {
	h.emu.Lock()
	h.services = append(h.services, name+" "+string(params))
	h.emu.Unlock()
	if name == "fail" {
		return nil, fmt.Errorf("service %s is broken", name)
	}
	return json.RawMessage(fmt.Sprintf(`{"service":%q,"params":%s}`, name, params)), nil
}
