package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/egress"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

// TestPythonNetworkByName runs Python in the sandbox of safe mode with a
// network list: the listed listener is reached through the proxy without
// a question, another is put to the person at run time (refused here),
// and the refusal is an event of the call.
func TestPythonNetworkByName(t *testing.T) {
	needSandbox(t)
	havePython(t)
	serve := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	listed, other := serve("listed"), serve("other")
	ts, err := builtin.New(&builtin.Options{Workspace: t.TempDir(), Configs: map[string]map[string]any{
		builtin.ExecutePython: {"autonomy_level": "safe", "network": []any{listed}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	code := `
import os, socket
host, port = os.environ["HTTP_PROXY"].removeprefix("http://").rsplit(":", 1)
def get(target):
    s = socket.create_connection((host, int(port)), timeout=20)
    s.sendall(("GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (target, target)).encode())
    data = b""
    while (b := s.recv(65536)):
        data += b
    return data.split(b"\r\n")[0].decode() + " " + data.rsplit(b"\r\n", 1)[-1].decode()
print(get("LISTED"))
print(get("OTHER"))
`
	code = strings.NewReplacer("LISTED", listed, "OTHER", other).Replace(code)
	var mu sync.Mutex
	var asked []string
	var events []tool.Event
	raw, _ := json.Marshal(map[string]any{"code": code})
	res, err := tool.Call(context.Background(), ts, "tool_execute_python_code", raw, &tool.CallOptions{
		Confirm: func(_ context.Context, r *tool.Request) (tool.Decision, string) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, r.Label)
			return tool.Reject, "not that one"
		},
		OnEvent: func(ev tool.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, ev)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	b, _ := json.Marshal(res)
	_ = json.Unmarshal(b, &out)
	stdout, _ := out["stdout"].(string)
	if !strings.Contains(stdout, "200 OK listed") || !strings.Contains(stdout, "403 Forbidden") {
		t.Fatalf("stdout %q (%v)", stdout, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != "Network access to "+other {
		t.Errorf("asked %q, want one question for %s", asked, other)
	}
	found := false
	for _, ev := range events {
		if strings.Contains(string(ev.Data), egress.DenialKey) && strings.Contains(ev.Text, other) {
			found = true
		}
	}
	if !found {
		t.Errorf("no denial event for %s among %+v", other, events)
	}
}

// TestNetworkAlwaysIsRememberedPerHost answers "always" through the hitl
// broker: the next run reaching the same host asks nobody, a run reaching
// another host asks again.
func TestNetworkAlwaysIsRememberedPerHost(t *testing.T) {
	needSandbox(t)
	havePython(t)
	serve := func() string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	first, second := serve(), serve()
	ts, err := builtin.New(&builtin.Options{Workspace: t.TempDir(), Configs: map[string]map[string]any{
		builtin.ExecutePython: {"autonomy_level": "safe", "network": []any{}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	var mu sync.Mutex
	var asked []string
	broker := hitl.New(hitl.FrontEndFunc(func(_ context.Context, r *tool.Request) (tool.Response, error) {
		mu.Lock()
		asked = append(asked, r.Label)
		mu.Unlock()
		return r.Submitted(tool.Always), nil
	}), nil)
	defer broker.Close()
	fetch := func(target string) string {
		t.Helper()
		code := strings.ReplaceAll(`
import os, socket
host, port = os.environ["HTTP_PROXY"].removeprefix("http://").rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=20)
s.sendall(b"GET http://TARGET/ HTTP/1.1\r\nHost: TARGET\r\nConnection: close\r\n\r\n")
data = b""
while (b := s.recv(65536)):
    data += b
print(data.split(b"\r\n")[0].decode())
`, "TARGET", target)
		raw, _ := json.Marshal(map[string]any{"code": code})
		res, err := tool.Call(context.Background(), ts, "tool_execute_python_code", raw, &tool.CallOptions{Respond: broker.Respond})
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		b, _ := json.Marshal(res)
		_ = json.Unmarshal(b, &out)
		s, _ := out["stdout"].(string)
		return strings.TrimSpace(s)
	}
	for _, target := range []string{first, first, second} {
		if got := fetch(target); got != "HTTP/1.1 200 OK" {
			t.Fatalf("%s: %q", target, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"Network access to " + first, "Network access to " + second}
	if strings.Join(asked, "|") != strings.Join(want, "|") {
		t.Errorf("asked %q, want %q", asked, want)
	}
}
