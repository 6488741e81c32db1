package worker

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

const eventLib = `
import os, sys, threading

def tool_report(n: int = 2000, progress_handler=None, log_handler=None):
    print("starting")
    for i in range(n):
        progress_handler(i + 1, total=n, message="step %d" % (i + 1))
    log_handler("half way", level="notice", data={"n": n, "raw": b"x"})
    log_handler("done")
    t = threading.Thread(target=lambda: print("from a thread", file=sys.stderr))
    t.start()
    t.join()
    os.write(1, b"raw fd 1\n")
    return "reported"

def tool_no_total(progress_handler):
    progress_handler(0.5)
    return "ok"

def tool_flood(log_handler, n: int = 5000):
    for i in range(n):
        log_handler("record %d" % i, level="debug")
    return "flooded"

def tool_bad_progress(progress_handler):
    progress_handler("lots")

def tool_kwargs(**kw):
    return sorted(kw)

def tool_service(name: str, params=None, lollms_client_instance=None):
    # The worker's internal helper, reached as its own proxies reach it.
    helper = type(lollms_client_instance).__init__.__globals__["_host_service"]
    return helper(name, params)
`

// TestEvents runs a tool that prints, reports progress and logs, with a
// host that takes all three: everything reaches it, attributed and in
// order, before Call returns; nothing of the call goes to OnOutput.
func TestEvents(t *testing.T) {
	requirePython(t)
	t.Parallel()
	var mu sync.Mutex
	var onOutput []Output
	p, _ := testPool(t, &Options{OnOutput: func(o Output) {
		mu.Lock()
		onOutput = append(onOutput, o)
		mu.Unlock()
	}})
	lib := writeLib(t, "events", eventLib)
	ws := t.TempDir()
	host := &eventHost{}
	r, err := p.Call(context.Background(), &Request{CallID: "c1", Workspace: ws, Library: lib, Function: "tool_report"}, host)
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, r, `"reported"`)

	host.emu.Lock()
	var text strings.Builder
	for _, o := range host.outputs {
		if o.CallID != "c1" || o.Library != lib.Path || o.PID == 0 {
			t.Errorf("output %+v not attributed to the call", o)
		}
		text.WriteString(o.Stream + ":" + o.Data)
	}
	if got := text.String(); got != "stdout:starting\nstderr:from a thread\n" {
		t.Errorf("call output %q", got)
	}
	if n := len(host.progress); n == 0 || n > 100 {
		t.Errorf("%d progress reports for 2000 calls of progress_handler: want them coalesced", n)
	} else if last := host.progress[n-1]; last.Progress != 2000 || last.Total == nil || *last.Total != 2000 || last.Message != "step 2000" {
		t.Errorf("last progress %+v", last)
	}
	for i := 1; i < len(host.progress); i++ {
		if host.progress[i].Progress < host.progress[i-1].Progress {
			t.Errorf("progress out of order: %v then %v", host.progress[i-1].Progress, host.progress[i].Progress)
		}
	}
	if len(host.logs) != 2 || host.logs[0].Level != "notice" || host.logs[0].Message != "half way" ||
		!jsonEqual(host.logs[0].Data, []byte(`{"n":2000,"raw":"eA=="}`)) ||
		host.logs[1].Level != "info" || host.logs[1].Message != "done" || host.logs[1].Data != nil {
		t.Errorf("logs %+v", host.logs)
	}
	host.emu.Unlock()

	// What the worker's fd 1 got belongs to no call: it goes to OnOutput.
	deadline := time.Now().Add(hangAfter)
	for {
		mu.Lock()
		var got []string
		for _, o := range onOutput {
			got = append(got, o.CallID+"|"+o.Data)
		}
		mu.Unlock()
		if strings.Join(got, "") == "|raw fd 1\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("OnOutput got %q, want only the raw fd output", got)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Progress without a total.
	if _, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_no_total"}, host); err != nil {
		t.Fatal(err)
	}
	host.emu.Lock()
	if last := host.progress[len(host.progress)-1]; last.Progress != 0.5 || last.Total != nil || last.Message != "" {
		t.Errorf("progress without a total: %+v", last)
	}
	host.emu.Unlock()
}

// TestEventsWithoutListener runs the same tool for a host that takes no
// events: the handlers do nothing, the output goes to OnOutput.
func TestEventsWithoutListener(t *testing.T) {
	requirePython(t)
	t.Parallel()
	var mu sync.Mutex
	var out strings.Builder
	p, _ := testPool(t, &Options{OnOutput: func(o Output) {
		mu.Lock()
		if o.CallID == "c2" {
			out.WriteString(o.Data)
		}
		mu.Unlock()
	}})
	lib := writeLib(t, "events", eventLib)
	ws := t.TempDir()
	r, err := p.Call(context.Background(), &Request{CallID: "c2", Workspace: ws, Library: lib, Function: "tool_report"}, &fakeHost{})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, r, `"reported"`)
	mu.Lock()
	if got := out.String(); got != "starting\nfrom a thread\n" {
		t.Errorf("OnOutput got %q", got)
	}
	mu.Unlock()
	// Bad values are the tool's error, listener or not.
	r, err = p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_bad_progress"}, nil)
	if err != nil || r.Exception == nil || r.Exception.Type != "TypeError" {
		t.Errorf("bad progress: %+v, %v", r, err)
	}
	// **kwargs does not get the event handlers.
	wantValue(t, mustCall(t, p, ws, lib, "tool_kwargs", "{}"),
		`["discussion_instance","lollms_client_instance","tool_context","user_interaction_handler"]`)
}

// TestEventsSlowHost floods a host that takes 2 ms per event: the call
// ends in bounded time and the host learns what was dropped.
func TestEventsSlowHost(t *testing.T) {
	requirePython(t)
	t.Parallel()
	p, _ := testPool(t, nil)
	lib := writeLib(t, "events", eventLib)
	ws := t.TempDir()
	host := &eventHost{slow: 2 * time.Millisecond}
	start := time.Now()
	r, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_flood",
		Args: json.RawMessage(`{"n": 20000}`)}, host)
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, r, `"flooded"`)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the flooding call took %v", d)
	}
	host.emu.Lock()
	defer host.emu.Unlock()
	n := len(host.logs)
	if n >= 20000 || n == 0 || !strings.Contains(host.logs[n-1].Message, "dropped") {
		t.Errorf("%d log records, the last %+v: want fewer than sent, ending with what was dropped", n, host.logs[n-1])
	}
}

// TestServiceHost calls the worker's generic host request.
func TestServiceHost(t *testing.T) {
	requirePython(t)
	t.Parallel()
	p, _ := testPool(t, nil)
	lib := writeLib(t, "events", eventLib)
	ws := t.TempDir()
	call := func(host Host, args string) *Reply {
		t.Helper()
		r, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: "tool_service",
			Args: json.RawMessage(args)}, host)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	host := &eventHost{}
	wantValue(t, call(host, `{"name": "echo", "params": {"a": [1, 2]}}`), `{"service":"echo","params":{"a":[1,2]}}`)
	if r := call(host, `{"name": "fail"}`); r.Exception == nil || r.Exception.Type != "RuntimeError" || r.Exception.Message != "service fail is broken" {
		t.Errorf("failing service: %+v", r.Exception)
	}
	host.emu.Lock()
	if strings.Join(host.services, ";") != `echo {"a":[1,2]};fail null` {
		t.Errorf("services asked: %q", host.services)
	}
	host.emu.Unlock()
	if r := call(&fakeHost{}, `{"name": "echo"}`); r.Exception == nil || !strings.Contains(r.Exception.Message, `no service "echo"`) {
		t.Errorf("host without services: %+v", r.Exception)
	}
}
