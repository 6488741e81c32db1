package mcp

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// badRequests are 2026-07-28 calls of mrtrTools' "append" (which writes
// a line to a file before it asks anything) that the server must refuse
// before the tool runs: a _meta version no revision has, and headers
// that disagree with the body.
func badRequests(capabilities string) []struct {
	name   string
	body   string
	header map[string]string
	status int
	code   int64
	text   string
} {
	meta := func(v string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + v + `","io.modelcontextprotocol/clientCapabilities":` + capabilities + `}`
	}
	call := func(v string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"append","arguments":{},` + meta(v) + `}}`
	}
	// An empty value is a header left out (postRPC sends none).
	headers := func(method, name, version string) map[string]string {
		return map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Method": method, "Mcp-Name": name, "Mcp-Protocol-Version": version}
	}
	return []struct {
		name   string
		body   string
		header map[string]string
		status int
		code   int64
		text   string
	}{
		{"unknown _meta version", call("2099-01-01"), headers("tools/call", "append", "2099-01-01"), 400, -32022, "unsupported protocol version"},
		{"Mcp-Protocol-Version disagrees", call("2025-11-25"), headers("tools/call", "append", "2026-07-28"), 400, codeHeaderMismatch, "Mcp-Protocol-Version"},
		// The older wire's header on a 2026-07-28 call: a mismatch, not
		// a revision the server does not serve (it serves both).
		{"Mcp-Protocol-Version of the older wire", call("2026-07-28"), headers("tools/call", "append", "2025-11-25"), 400, codeHeaderMismatch, `header \"2025-11-25\" does not match`},
		{"Mcp-Protocol-Version missing", call("2026-07-28"), headers("tools/call", "append", ""), 400, codeHeaderMismatch, "header is missing"},
		{"Mcp-Method disagrees", call("2026-07-28"), headers("tools/list", "append", "2026-07-28"), 400, codeHeaderMismatch, "Mcp-Method"},
		{"Mcp-Name disagrees", call("2026-07-28"), headers("tools/call", "other", "2026-07-28"), 400, codeHeaderMismatch, "Mcp-Name"},
	}
}

// TestBadInputRunsNothing: the server answers each bad request with the
// spec's error (UnsupportedProtocolVersion with the versions it serves,
// HeaderMismatch), and the tool never runs.
func TestBadInputRunsNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	srv := NewServer(mrtrTools(t, file), nil)
	t.Cleanup(func() { srv.Close() })
	url := serveHTTP(t, srv, nil)
	for _, c := range badRequests(`{"elicitation":{}}`) {
		t.Run(c.name, func(t *testing.T) {
			status, m := postRPC(t, url, c.body, c.header)
			if status != c.status || rpcCode(m) != c.code || !strings.Contains(string(m["error"]), c.text) {
				t.Errorf("got %d %s %s, want %d, code %d saying %q", status, m["error"], m["result"], c.status, c.code, c.text)
			}
			if c.code == -32022 && !strings.Contains(string(m["error"]), `"2026-07-28"`) {
				t.Errorf("the error does not list the versions served: %s", m["error"])
			}
		})
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the tool ran (%v)", err)
	}
}

// countingStore counts the tasks created.
type countingStore struct {
	MemoryTaskStore
	created atomic.Int64
}

func (s *countingStore) Create(ctx context.Context, task *Task) error {
	s.created.Add(1)
	return s.MemoryTaskStore.Create(ctx, task)
}

// TestTasksBadInputStartsNothing: the same requests from a client that
// declares the tasks extension, for a tool that runs as a task, get the
// same errors and start no task; a good one starts one.
func TestTasksBadInputStartsNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	ts := mrtrTools(t, file)
	srv := NewServer(ts, nil)
	store := &countingStore{}
	tasks := NewTasks(ts, &TaskOptions{Store: store})
	t.Cleanup(func() { tasks.Close(); srv.Close() })
	front := httptest.NewServer(TasksHandler(srv.Handler(&HTTPOptions{Stateless: true}), tasks, &TaskHTTPOptions{
		Support: func(string) TaskSupport { return TaskOptional },
	}))
	t.Cleanup(front.Close)
	caps := `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	for _, c := range badRequests(caps) {
		t.Run(c.name, func(t *testing.T) {
			status, m := postRPC(t, front.URL, c.body, c.header)
			if status != c.status || rpcCode(m) != c.code || !strings.Contains(string(m["error"]), c.text) {
				t.Errorf("got %d %s %s, want %d, code %d saying %q", status, m["error"], m["result"], c.status, c.code, c.text)
			}
		})
	}
	if n := store.created.Load(); n != 0 {
		t.Fatalf("bad requests started %d task(s)", n)
	}
	// The control: a call of the table, well formed, is a task.
	c := badRequests(caps)[2]
	c.header["Mcp-Method"], c.header["Mcp-Protocol-Version"] = "tools/call", "2026-07-28"
	_, m := postRPC(t, front.URL, c.body, c.header)
	if !strings.Contains(string(m["result"]), `"resultType":"task"`) || store.created.Load() != 1 {
		t.Errorf("a good call: %s %s, %d task(s)", m["error"], m["result"], store.created.Load())
	}
}

// TestMRTRExpiredState: a requestState past its expiry is refused with
// invalid params saying so, and the call it names is untouched: its
// current requestState still resumes it, and what the tool did before
// asking happened once.
func TestMRTRExpiredState(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	srv := NewServer(mrtrTools(t, file), nil)
	t.Cleanup(func() { srv.Close() })
	cs := mrtrClient(t, serveHTTP(t, srv, nil), "token-a")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	call := func(state string, answers sdk.InputResponseMap) (*sdk.CallToolResult, error) {
		return cs.CallTool(ctx, &sdk.CallToolParams{Name: "append", Arguments: map[string]any{}, RequestState: state, InputResponses: answers})
	}
	r1, err := call("", nil)
	if err != nil {
		t.Fatal(err)
	}
	k1, s1 := onlyKey(t, r1), r1.RequestState
	st, err := srv.openTripState(s1)
	if err != nil {
		t.Fatal(err)
	}
	st.Expires = time.Now().Add(-time.Minute).Unix()
	expired := srv.seal(st) // signed by this server: only its expiry is wrong
	allow := sdk.InputResponseMap{k1: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}}

	res, err := call(expired, allow)
	wantInvalidParams(t, "expired", res, err, "expired")

	r2, err := call(s1, allow)
	if err != nil {
		t.Fatalf("the call after the expired state: %v", err)
	}
	k2 := onlyKey(t, r2)
	r3, err := call(r2.RequestState, sdk.InputResponseMap{k2: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": "Ada"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, r3); got != "allow by Ada" {
		t.Errorf("result %q", got)
	}
	if b, _ := os.ReadFile(file); string(b) != "appended\n" {
		t.Errorf("the tool's side effect happened %d times", strings.Count(string(b), "appended"))
	}
}

// TestReplayStateBadInput: a stateless server that replays calls
// (HTTPOptions.Stateless, no replicas) refuses a requestState that was
// tampered with, expired, brought by another caller or for another tool,
// before it runs the tool again: the tool's side effect (a line written
// before it asks) is not repeated by any of them.
func TestReplayStateBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	srv := NewServer(mrtrTools(t, file), nil)
	t.Cleanup(func() { srv.Close() })
	url := serveHTTP(t, srv, &HTTPOptions{Stateless: true})
	a, b := mrtrClient(t, url, "token-a"), mrtrClient(t, url, "token-b")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r1, err := a.CallTool(ctx, &sdk.CallToolParams{Name: "append", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	k1, s1 := onlyKey(t, r1), r1.RequestState
	st, err := srv.decodeState(s1)
	if err != nil {
		t.Fatal(err)
	}
	st.Issued = time.Now().Add(-2 * srv.opts.QuestionTimeout).Unix()
	expired := srv.encodeState(st)
	allow := sdk.InputResponseMap{k1: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}}
	for _, c := range []struct {
		name, tool, state, text string
		cs                      *sdk.ClientSession
	}{
		{"tampered", "append", s1 + "x", "requestState", a},
		{"expired", "append", expired, "expired", a},
		{"another caller", "append", s1, "another caller", b},
		{"another tool", "other", s1, "another call", a},
	} {
		res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: map[string]any{}, RequestState: c.state, InputResponses: allow})
		wantInvalidParams(t, c.name, res, err, c.text)
	}
	if b, _ := os.ReadFile(file); string(b) != "appended\n" {
		t.Errorf("refused states ran the tool again: %q", b)
	}
}
