package lcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/egress"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// fetchLib fetches URLs through the proxy its sandbox names, as an HTTP
// client that honours HTTP_PROXY does.
const fetchLib = `import os, urllib.request

def tool_fetch(urls: list) -> dict:
    """Fetches each URL.

    Args:
        urls: the URLs
    """
    # The listeners are on the host's loopback: reached through the proxy,
    # which NO_PROXY (the box's own loopback) would bypass.
    os.environ.pop("NO_PROXY", None)
    os.environ.pop("no_proxy", None)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": os.environ.get("HTTP_PROXY", "")}))
    out = {}
    for u in urls:
        try:
            out[u] = opener.open(u, timeout=20).read().decode()
        except Exception as e:
            out[u] = "refused " + str(getattr(e, "code", type(e).__name__))
    return out
`

// TestPythonLibraryNetworkByName boxes a Python tool library with a
// network list: the listed host is reached, another is put to the person
// through the call (allowed once here, then rejected), and the refusal is
// an event of the call.
func TestPythonLibraryNetworkByName(t *testing.T) {
	needPython(t)
	if st := sandbox.Probe(); !st.Available {
		t.Skipf("the kernel sandbox is unavailable here: %s", st.Reason)
	}
	serve := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	listed, asked, refused := serve("listed"), serve("asked"), serve("refused")
	tools := t.TempDir()
	if err := os.WriteFile(filepath.Join(tools, "fetcher.py"), []byte(fetchLib), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var questions []string
	var events []tool.Event
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{tools}, Workspace: t.TempDir(),
		HostToolConfigs: map[string]map[string]any{"fetcher": {"sandbox": "workspace-write", "network": []any{listed}}},
		Respond: func(_ context.Context, r *tool.Request) tool.Response {
			mu.Lock()
			defer mu.Unlock()
			questions = append(questions, r.Label)
			if strings.Contains(r.Label, asked) {
				return r.Submitted(tool.Allow)
			}
			return r.Declined("not that one")
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
	defer eng.Close()
	urls := []string{"http://" + listed + "/", "http://" + asked + "/", "http://" + refused + "/"}
	args, _ := json.Marshal(map[string]any{"urls": urls})
	res := eng.ExecuteTool(context.Background(), "tool_fetch", args)
	if !res.Success {
		t.Fatalf("fetch failed: %+v", res)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(res.Text()), &got); err != nil {
		t.Fatalf("%s: %v", res.Text(), err)
	}
	if got[urls[0]] != "listed" || got[urls[1]] != "asked" || got[urls[2]] != "refused 403" {
		t.Errorf("fetched %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{egress.ConfirmLabel(strings.Split(asked, ":")[0], port(asked)), egress.ConfirmLabel(strings.Split(refused, ":")[0], port(refused))}
	if strings.Join(questions, "|") != strings.Join(want, "|") {
		t.Errorf("questions %q, want %q", questions, want)
	}
	denials := 0
	for _, ev := range events {
		if strings.Contains(string(ev.Data), egress.DenialKey) && ev.Tool == "tool_fetch" {
			denials++
		}
	}
	if denials != 1 {
		t.Errorf("%d denial events of the call, want 1: %+v", denials, events)
	}
}

func port(addr string) int {
	var p int
	fmt.Sscan(addr[strings.LastIndexByte(addr, ':')+1:], &p)
	return p
}
