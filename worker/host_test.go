package worker

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const hostLib = `
import os, threading

CFG = None
CONFIRM = None
INTERACT = None
HOOK_CALLS = []

def set_confirm_handler(h):
    global CONFIRM
    CONFIRM = h
    HOOK_CALLS.append("confirm:" + ("proxy" if h is not None else "None"))
    with open("hook_marker", "a") as f:
        f.write("confirm:%s\n" % (h is not None))

def set_user_interaction_handler(h):
    global INTERACT
    INTERACT = h
    HOOK_CALLS.append("interact:" + ("proxy" if h is not None else "None"))

def init_tools_library(config):
    global CFG
    CFG = config

def tool_config():
    return {"keys": sorted(CFG), "hooks": HOOK_CALLS, "same": CFG.get("confirm_handler") is CONFIRM}

def tool_confirm():
    return list(CONFIRM("rm -rf build", "shell", ["rm", "-rf", "build"]))

def tool_confirm_from_thread():
    out = []
    t = threading.Thread(target=lambda: out.append(CONFIRM("src", "threaded")))
    t.start()
    t.join()
    return list(out[0])

def tool_ask(user_interaction_handler=None):
    if user_interaction_handler is None:
        return "no handler"
    return user_interaction_handler({"type": "secret", "title": "Key", "prompt": "API key?"})

def tool_generate(lollms_client_instance=None):
    c = lollms_client_instance
    return c.generate_text("hello", n_predict=5, temperature=0.5, streaming_callback=print)

def tool_generate_fails(lollms_client_instance=None):
    return lollms_client_instance.generate("fail")

def tool_modalities(lollms_client_instance=None):
    c = lollms_client_instance
    out = {"llm": c.llm is not None, "absent": [c.tti, c.tts, c.stt, c.ttv, c.ttm, c.rag]}
    for fn in (c.generate_image, c.generate_music, c.query_rag):
        try:
            fn("x")
        except RuntimeError as e:
            out.setdefault("errors", []).append(str(e))
    if c.llm is None:
        try:
            c.generate_text("x")
        except RuntimeError as e:
            out["text_error"] = str(e)
    return out

def tool_nested(lollms_client_instance=None):
    return lollms_client_instance.tools.execute_tool("tool_other", {"a": 1, "b": b"x"})

def tool_discussion(discussion_instance=None):
    if discussion_instance is None:
        return None
    return discussion_instance.messages
`

func hostCall(t *testing.T, p *Pool, ws string, lib Library, fn string, h Handlers, host Host, llm, disc bool) *Reply {
	t.Helper()
	r, err := p.Call(context.Background(), &Request{CallID: fn, Workspace: ws, Library: lib, Function: fn,
		Handlers: h, HasLLM: llm, HasDiscussion: disc, Config: json.RawMessage(`{"autonomy_level":"strict"}`)}, host)
	if err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	return r
}

func TestHostProxies(t *testing.T) {
	t.Parallel()
	p, _ := testPool(t, nil)
	lib := writeLib(t, "hosted", hostLib)
	ws := t.TempDir()
	answer := "s3cret"
	host := &fakeHost{decision: "always", answer: &answer}
	both := Handlers{Confirm: true, Interact: true}
	call := func(fn string) *Reply { return hostCall(t, p, ws, lib, fn, both, host, true, true) }

	wantValue(t, call("tool_config"), `{"keys":["autonomy_level","confirm_handler","user_interaction_handler"],
		"hooks":["confirm:proxy","interact:proxy","interact:proxy"],"same":true}`)
	wantValue(t, call("tool_confirm"), `["always","because shell"]`)
	wantValue(t, call("tool_confirm_from_thread"), `["always","because threaded"]`)
	host.mu.Lock()
	if len(host.confirms) != 2 || host.confirms[0].Source != "rm -rf build" ||
		strings.Join(host.confirms[0].Argv, " ") != "rm -rf build" || host.confirms[0].Library != "hosted" ||
		host.confirms[1].Argv != nil {
		t.Errorf("confirm requests: %+v", host.confirms)
	}
	host.mu.Unlock()
	wantValue(t, call("tool_ask"), `"s3cret"`)
	host.mu.Lock()
	if len(host.interacts) != 1 || !jsonEqual([]byte(host.interacts[0]), []byte(`{"type":"secret","title":"Key","prompt":"API key?"}`)) {
		t.Errorf("interaction requests: %q", host.interacts)
	}
	host.mu.Unlock()
	wantValue(t, call("tool_generate"), `"generated:hello:{\"n_predict\":5,\"temperature\":0.5}"`)
	if r := call("tool_generate_fails"); r.Exception == nil || r.Exception.Type != "RuntimeError" || r.Exception.Message != "model unavailable" {
		t.Errorf("generate failure: %+v", r.Exception)
	}
	wantValue(t, call("tool_nested"), `{"success":true,"status_code":200,"output":{"ran":"tool_other","params":{"a":1,"b":"eA=="}}}`)
	wantValue(t, call("tool_discussion"), `[{"role":"user","content":"hi"}]`)
	r := call("tool_modalities")
	var m struct {
		LLM    bool
		Absent []any
		Errors []string
	}
	if err := json.Unmarshal(r.Value, &m); err != nil || !m.LLM || len(m.Absent) != 6 || m.Absent[0] != nil || len(m.Errors) != 3 {
		t.Errorf("modalities: %s", r.Value)
	}

	// A cancelled answer is None.
	host.mu.Lock()
	host.answer = nil
	host.mu.Unlock()
	wantValue(t, call("tool_ask"), `null`)
}

func TestNoHandlers(t *testing.T) {
	t.Parallel()
	p, _ := testPool(t, nil)
	lib := writeLib(t, "hosted", hostLib)
	ws := t.TempDir()
	call := func(fn string) *Reply { return hostCall(t, p, ws, lib, fn, Handlers{}, nil, false, false) }
	wantValue(t, call("tool_config"), `{"keys":["autonomy_level"],"hooks":[],"same":true}`)
	wantValue(t, call("tool_ask"), `"no handler"`)
	wantValue(t, call("tool_discussion"), `null`)
	r := call("tool_modalities")
	if !strings.Contains(string(r.Value), `"llm":false`) || !strings.Contains(string(r.Value), "text_error") {
		t.Errorf("modalities without an LLM: %s", r.Value)
	}
	if _, err := os.Stat(filepath.Join(ws, "hook_marker")); err == nil {
		t.Error("set_confirm_handler was called without a host handler")
	}

	// The handler appears later: SetHandlers reaches the loaded module
	// without any call.
	p.SetHandlers(true, false)
	deadline := time.Now().Add(hangAfter)
	for {
		b, _ := os.ReadFile(filepath.Join(ws, "hook_marker"))
		if string(b) == "confirm:True\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hook marker = %q after SetHandlers", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A call that says the handler is gone again re-invokes the hook with
	// None.
	wantValue(t, call("tool_config"), `{"keys":["autonomy_level"],"hooks":["confirm:proxy","confirm:None"],"same":true}`)
}

// TestCancelDuringHostRequest cancels a call whose tool waits for the host:
// the host's context ends, the call returns promptly, the worker survives.
func TestCancelDuringHostRequest(t *testing.T) {
	t.Parallel()
	p, _ := testPool(t, nil)
	lib := writeLib(t, "hosted", hostLib)
	ws := t.TempDir()
	host := &fakeHost{decision: "allow", block: make(chan struct{})}
	hostCall(t, p, ws, lib, "tool_config", Handlers{Confirm: true}, host, false, false)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			host.mu.Lock()
			n := len(host.confirms)
			host.mu.Unlock()
			if n > 0 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, err := p.Call(ctx, &Request{Workspace: ws, Library: lib, Function: "tool_confirm", Handlers: Handlers{Confirm: true}}, host)
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("err = %v, want ErrCancelled", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("cancel took %v", d)
	}
	deadline := time.Now().Add(hangAfter)
	for {
		host.mu.Lock()
		e := host.ctxErr
		host.mu.Unlock()
		if e != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the host's context was not cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(host.block)
	r := hostCall(t, p, ws, lib, "tool_confirm", Handlers{Confirm: true}, host, false, false)
	wantValue(t, r, `["allow","because shell"]`)
	if r.StateReset {
		t.Error("the worker was replaced")
	}
}
