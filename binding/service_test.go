package binding

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lcptools/lcp/tool"
)

const serviceLib = `import json

def _helper(client):
    # The worker's generic host request, as its own proxies reach it.
    return type(client).__init__.__globals__["_host_service"]

def tool_ask(name: str, params: str = "null", lollms_client_instance=None):
    """Asks a host service."""
    return {"output": _helper(lollms_client_instance)(name, json.loads(params))}
`

// TestServices checks that Python code reaches the Services of the
// binding by name, with its library and its call, and that an unknown
// service or a failing one is a RuntimeError with the host's text.
func TestServices(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"svc.py": serviceLib})
	var got []*ServiceRequest
	b, err := New(&Options{Folders: []string{dir}, Workspace: t.TempDir(), Services: map[string]Service{
		"echo": func(_ context.Context, r *ServiceRequest) (json.RawMessage, error) {
			got = append(got, r)
			return json.Marshal(map[string]any{"params": r.Params, "library": r.Library, "tool": r.Call.Tool})
		},
		"fail": func(context.Context, *ServiceRequest) (json.RawMessage, error) {
			return nil, errors.New("the fail service is out of order")
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	call := func(args string) *tool.Result {
		t.Helper()
		res, err := tool.Call(context.Background(), b, "tool_ask", json.RawMessage(args), nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := call(`{"name": "echo", "params": "{\"a\": [1, 2]}"}`)
	if !res.Success || res.Text() != `{"library":"svc","params":{"a":[1,2]},"tool":"tool_ask"}` {
		t.Errorf("echo = %+v %s", res, res.Text())
	}
	if len(got) != 1 || got[0].Name != "echo" || got[0].Call == nil || got[0].Call.Tool != "tool_ask" {
		t.Errorf("requests %+v", got)
	}
	if res := call(`{"name": "fail"}`); res.Success || !strings.Contains(res.Error, "RuntimeError: the fail service is out of order") {
		t.Errorf("fail = %+v", res)
	}
	if res := call(`{"name": "nope"}`); res.Success || !strings.Contains(res.Error, `RuntimeError: the host offers no service "nope"`) {
		t.Errorf("unknown = %+v", res)
	}
}
