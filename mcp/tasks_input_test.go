//lint:file-ignore SA1019 the tests ask for and answer roots and sampling inside tasks as clients still do (deprecated from 2026-07-28 on, SEP-2577)

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// nameSchema is the form of the questions of the tests below.
var nameSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)

// askingTools serves ask_two, which puts an elicitation and a roots
// request to the client in one AskClient, and hello, which asks for the
// name its intake (helloIntake) gathers.
func askingTools(t *testing.T) tool.Toolset {
	t.Helper()
	askTwo, err := native.Func(tool.Info{Name: "ask_two", Description: "Asks two things at once.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ map[string]any) (any, error) {
			got, err := AskClient(ctx, map[string]sdk.InputRequest{
				"name":  &sdk.ElicitParams{Message: "Your name?", RequestedSchema: nameSchema},
				"roots": &sdk.ListRootsParams{},
			})
			if err != nil {
				return nil, err
			}
			e := got["name"].(*sdk.ElicitResult)
			r := got["roots"].(*sdk.ListRootsResult)
			return fmt.Sprintf("%v has %d root(s), the first %s", e.Content["name"], len(r.Roots), r.Roots[0].URI), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	hello, err := native.Func(tool.Info{Name: "hello", Description: "Greets whom its intake names.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ map[string]any) (any, error) {
			got, err := AskClient(ctx, helloIntake("hello", nil))
			if err != nil {
				return nil, err
			}
			return fmt.Sprintf("Hello, %v!", got["user"].(*sdk.ElicitResult).Content["name"]), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := native.New(nil, askTwo, hello)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func helloIntake(name string, _ json.RawMessage) sdk.InputRequestMap {
	if name != "hello" {
		return nil
	}
	return sdk.InputRequestMap{"user": &sdk.ElicitParams{Message: "Who are you?", RequestedSchema: nameSchema}}
}

// TestTaskAskClientPartial: the requests of one AskClient inside a task
// are all pending at once; tasks/update may answer them one at a time,
// and the task waits in input_required until the last one is in. An
// answer of the wrong kind delivers nothing.
func TestTaskAskClientPartial(t *testing.T) {
	log := newStatusLog()
	tasks := NewTasks(askingTools(t), &TaskOptions{OnStatus: log.add})
	t.Cleanup(func() { tasks.Close() })
	caps := &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{}, RootsV2: &sdk.RootCapabilities{}}
	task, err := tasks.StartCall(context.Background(), "ada", &TaskCall{Tool: "ask_two", Arguments: json.RawMessage(`{}`), ClientCapabilities: caps})
	if err != nil {
		t.Fatal(err)
	}
	log.wait(t, task.ID, TaskInputRequired)
	var d detailed
	rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
	keys := map[string]string{} // method → key
	for k, raw := range d.InputRequests {
		var ir struct {
			Method string `json:"method"`
		}
		if err := json.Unmarshal(raw, &ir); err != nil {
			t.Fatal(err)
		}
		keys[ir.Method] = k
	}
	if d.Status != TaskInputRequired || len(keys) != 2 || keys["elicitation/create"] == "" || keys["roots/list"] == "" {
		t.Fatalf("tasks/get = %+v", d)
	}

	// A sampling answer to the roots request: refused, nothing delivered.
	_, rerr, _ := tasks.HandleRPC(context.Background(), "ada", true, "tasks/update", json.RawMessage(`{"taskId":"`+task.ID+`","inputResponses":{"`+keys["roots/list"]+`":{"action":"accept","content":{}}}}`))
	if rerr == nil || rerr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rerr.Message, "roots/list") {
		t.Fatalf("a wrong answer: %v", rerr)
	}
	rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
	if len(d.InputRequests) != 2 {
		t.Fatalf("after a wrong answer: %+v", d)
	}

	// The roots first: the question stays.
	rpc(t, tasks, "ada", "tasks/update", `{"taskId":"`+task.ID+`","inputResponses":{"`+keys["roots/list"]+`":{"roots":[{"uri":"file:///work"}]}}}`, nil)
	rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
	if _, ok := d.InputRequests[keys["elicitation/create"]]; d.Status != TaskInputRequired || len(d.InputRequests) != 1 || !ok {
		t.Fatalf("after one answer of two: %+v", d)
	}
	rpc(t, tasks, "ada", "tasks/update", `{"taskId":"`+task.ID+`","inputResponses":{"`+keys["elicitation/create"]+`":{"action":"accept","content":{"name":"Ada"}}}}`, nil)
	log.wait(t, task.ID, TaskCompleted)
	rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
	if d.Result == nil || d.Result.IsError || d.Result.Content[0].Text != "Ada has 1 root(s), the first file:///work" {
		t.Fatalf("tasks/get = %+v", d)
	}
}

// TestTaskAskClientUndeclared: a task whose client did not declare what
// AskClient asks for asks nothing and ends saying what is missing.
func TestTaskAskClientUndeclared(t *testing.T) {
	log := newStatusLog()
	tasks := NewTasks(askingTools(t), &TaskOptions{OnStatus: log.add})
	t.Cleanup(func() { tasks.Close() })
	task, err := tasks.StartCall(context.Background(), "ada", &TaskCall{Tool: "ask_two", Arguments: json.RawMessage(`{}`),
		ClientCapabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{}}})
	if err != nil {
		t.Fatal(err)
	}
	log.wait(t, task.ID, TaskCompleted)
	var d detailed
	rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
	if d.Result == nil || !d.Result.IsError || !strings.Contains(d.Result.Content[0].Text, "did not declare roots") {
		t.Fatalf("tasks/get = %+v", d)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, n := range log.seen {
		if n.Status == TaskInputRequired {
			t.Errorf("the task asked: %+v", n)
		}
	}
}

// intakeFront serves TasksHandler with hello's intake in front of a
// stand-in for the server's handler that answers tools/list.
func intakeFront(t *testing.T) (*httptest.Server, *statusLog) {
	t.Helper()
	log := newStatusLog()
	tasks := NewTasks(askingTools(t), &TaskOptions{OnStatus: log.add})
	t.Cleanup(func() { tasks.Close() })
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &m)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"resultType":"complete","tools":[{"name":"hello","inputSchema":{"type":"object"}},{"name":"ask_two","inputSchema":{"type":"object"},"execution":{"other":1}},{"name":"plain","inputSchema":{"type":"object"}}]}}`)
	})
	support := map[string]TaskSupport{"hello": TaskRequired, "ask_two": TaskOptional}
	srv := httptest.NewServer(TasksHandler(next, tasks, &TaskHTTPOptions{
		Support: func(n string) TaskSupport { return support[n] },
		Intake:  helloIntake,
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

const elicitingMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// TestTaskIntake: a call whose tool has an intake gets input_required
// (no task, no requestState) until it brings every answer; the call that
// does starts the task, whose tool reads the answers.
func TestTaskIntake(t *testing.T) {
	srv, log := intakeFront(t)
	_, m := postRPC(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{},`+elicitingMeta+`}}`, nil)
	var round1 map[string]json.RawMessage
	if err := json.Unmarshal(m["result"], &round1); err != nil || string(round1["resultType"]) != `"input_required"` || round1["taskId"] != nil || round1["requestState"] != nil {
		t.Fatalf("round 1: %s", m["result"])
	}
	var reqs sdk.InputRequestMap
	if err := json.Unmarshal(round1["inputRequests"], &reqs); err != nil || len(reqs) != 1 || reqs["user"] == nil {
		t.Fatalf("round 1's requests: %s (%v)", round1["inputRequests"], err)
	}

	_, m = postRPC(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{},"inputResponses":{"user":{"action":"accept","content":{"name":"Alice"}}},`+elicitingMeta+`}}`, nil)
	var created map[string]json.RawMessage
	if err := json.Unmarshal(m["result"], &created); err != nil || string(created["resultType"]) != `"task"` || created["requestState"] != nil || created["inputRequests"] != nil {
		t.Fatalf("round 2: %s", m)
	}
	var id string
	_ = json.Unmarshal(created["taskId"], &id)
	log.wait(t, id, TaskCompleted)
	_, m = postRPC(t, srv.URL, `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"`+id+`",`+elicitingMeta+`}}`, nil)
	if !strings.Contains(string(m["result"]), "Hello, Alice!") {
		t.Fatalf("tasks/get: %s", m["result"])
	}
	log.mu.Lock()
	for _, n := range log.seen {
		if n.ID == id && n.Status == TaskInputRequired {
			t.Errorf("the task asked again: %+v", n)
		}
	}
	log.mu.Unlock()

	many := make([]string, 0, maxIntakeResponses+1)
	for i := range maxIntakeResponses + 1 {
		many = append(many, fmt.Sprintf(`"k%d":{"action":"decline"}`, i))
	}
	bad := []struct {
		name, params string
		code         int64
		says         string
	}{
		{"an answer of the wrong kind", `"inputResponses":{"user":{"roots":[]}},` + elicitingMeta, jsonrpc.CodeInvalidParams, "elicitation/create"},
		{"inputResponses not an object", `"inputResponses":[1,2],` + elicitingMeta, jsonrpc.CodeInvalidParams, "inputResponses"},
		{"too many answers", `"inputResponses":{` + strings.Join(many, ",") + `},` + elicitingMeta, jsonrpc.CodeInvalidParams, "asked for 1"},
		{"no elicitation declared", declaredMeta, codeMissingCapable, "elicitation"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, m := postRPC(t, srv.URL, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"hello","arguments":{},`+c.params+`}}`, nil)
			if rpcCode(m) != c.code || !strings.Contains(string(m["error"]), c.says) {
				t.Errorf("answered %s; want code %d saying %q", m, c.code, c.says)
			}
		})
	}
}

// TestTasksToolsList: tools/list says each tool's task support, keeping
// what else its execution holds.
func TestTasksToolsList(t *testing.T) {
	srv, _ := intakeFront(t)
	_, m := postRPC(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+plainMeta+`}}`, nil)
	var res struct {
		Tools []struct {
			Name      string                     `json:"name"`
			Execution map[string]json.RawMessage `json:"execution"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"hello": `"required"`, "ask_two": `"optional"`, "plain": `"forbidden"`}
	for _, tl := range res.Tools {
		if got := string(tl.Execution["taskSupport"]); got != want[tl.Name] {
			t.Errorf("%s: taskSupport %s, want %s", tl.Name, got, want[tl.Name])
		}
	}
	if len(res.Tools) != 3 || string(res.Tools[1].Execution["other"]) != "1" {
		t.Errorf("tools/list = %s", m["result"])
	}
}

func FuzzGatherIntake(f *testing.F) {
	f.Add(`{"user":{"action":"accept","content":{"name":"x"}}}`)
	f.Add(`{"user":{"roots":[]}}`)
	f.Add(`{"user":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}}`)
	f.Add(`[]`)
	f.Add(`null`)
	intake := helloIntake("hello", nil)
	caps := &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{}}
	f.Fuzz(func(t *testing.T, raw string) {
		given, ask, rerr := gatherIntake(intake, caps, json.RawMessage(raw))
		n := 0
		if given != nil {
			n++
			if _, ok := given["user"].(*sdk.ElicitResult); !ok || len(given) != 1 {
				t.Fatalf("%q gave %v", raw, given)
			}
		}
		if ask != nil {
			n++
			if !json.Valid(ask) {
				t.Fatalf("%q asked %q", raw, ask)
			}
		}
		if rerr != nil {
			n++
		}
		if n != 1 {
			t.Fatalf("%q: answers %v, ask %s, error %v", raw, given, ask, rerr)
		}
	})
}

// TestMRTRHugeInputResponses: a retry that brings thousands of answers to
// requests never made (within the body limit) is asked again what the
// call waits for, and the call is untouched; one past the body limit is
// refused before it is read.
func TestMRTRHugeInputResponses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	srv := NewServer(mrtrTools(t, file), nil)
	t.Cleanup(func() { srv.Close() })
	url := serveHTTP(t, srv, nil)
	cs := mrtrClient(t, url, "token-a")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r1, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "append", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	k1 := onlyKey(t, r1)
	junk := sdk.InputResponseMap{}
	for i := range 5000 {
		junk[fmt.Sprintf("never-asked-%d", i)] = &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}
	}
	r2, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "append", Arguments: map[string]any{}, RequestState: r1.RequestState, InputResponses: junk})
	if err != nil || onlyKey(t, r2) != k1 {
		t.Fatalf("a retry with 5000 unrelated answers: %+v, %v", r2, err)
	}

	big := sdk.InputResponseMap{k1: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow", "pad": strings.Repeat("x", DefaultMaxBodyBytes)}}}
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "append", Arguments: map[string]any{}, RequestState: r2.RequestState, InputResponses: big}); err == nil {
		t.Fatalf("a body past the limit was answered: %+v", res)
	}
	if b, _ := os.ReadFile(file); string(b) != "appended\n" {
		t.Errorf("the tool's side effect happened %d times", strings.Count(string(b), "appended"))
	}
}

func FuzzWithTaskSupport(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"hello","execution":{"x":1}}]}}`)
	f.Add(`{"result":{"tools":[{"name":1}]}}`)
	f.Add(`{"result":{"tools":{}}}`)
	h := &tasksHandler{opts: TaskHTTPOptions{Support: func(n string) TaskSupport {
		if n == "hello" {
			return TaskRequired
		}
		return ""
	}}}
	f.Fuzz(func(t *testing.T, msg string) {
		out := h.withTaskSupport([]byte(msg))
		if string(out) != msg && !json.Valid(out) {
			t.Fatalf("%q became %q", msg, out)
		}
	})
}
