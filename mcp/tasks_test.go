package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// statusLog collects the status notifications of Tasks, and lets a test
// wait for a status without sleeping.
type statusLog struct {
	mu      sync.Mutex
	seen    []Task
	changed chan struct{}
}

func newStatusLog() *statusLog { return &statusLog{changed: make(chan struct{}, 1)} }

func (l *statusLog) add(t Task) {
	l.mu.Lock()
	l.seen = append(l.seen, t)
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// wait returns the first notification of task id with status s.
func (l *statusLog) wait(t *testing.T, id string, s TaskStatus) Task {
	t.Helper()
	deadline := time.After(2 * time.Minute) // a hang detector, not a timing assertion
	for {
		l.mu.Lock()
		for _, n := range l.seen {
			if n.ID == id && n.Status == s {
				l.mu.Unlock()
				return n
			}
		}
		l.mu.Unlock()
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("task %s never reached %s; saw %+v", id, s, l.seen)
		}
	}
}

func taskInventory(t *testing.T) tool.Toolset {
	t.Helper()
	block, err := native.Func(tool.Info{Name: "block", Description: "Runs until cancelled.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ map[string]any) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := native.New(nil, block)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Compose(testInventory(t), ts)
}

func newTasks(t *testing.T, opts *TaskOptions) (*Tasks, *statusLog) {
	t.Helper()
	log := newStatusLog()
	var o TaskOptions
	if opts != nil {
		o = *opts
	}
	o.OnStatus = log.add
	tasks := NewTasks(taskInventory(t), &o)
	t.Cleanup(func() { tasks.Close() })
	return tasks, log
}

// rpc calls HandleRPC as a client that declared the extension and
// decodes the result into v.
func rpc(t *testing.T, tasks *Tasks, owner, method, params string, v any) {
	t.Helper()
	res, rerr, ok := tasks.HandleRPC(context.Background(), owner, true, method, json.RawMessage(params))
	if !ok || rerr != nil {
		t.Fatalf("%s %s: ok=%v, error %v", method, params, ok, rerr)
	}
	if v != nil {
		if d, ok := v.(*detailed); ok {
			*d = detailed{} // a decode merges into what is there
		}
		if err := json.Unmarshal(res, v); err != nil {
			t.Fatalf("%s: %v: %s", method, err, res)
		}
	}
}

// detailed is tasks/get's answer.
type detailed struct {
	ResultType     string                     `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         TaskStatus                 `json:"status"`
	CreatedAt      string                     `json:"createdAt"`
	TTLMs          int64                      `json:"ttlMs"`
	PollIntervalMs int64                      `json:"pollIntervalMs"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Result         *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error       *TaskError      `json:"error"`
	RequestSate json.RawMessage `json:"requestState"`
}

func TestTaskCompletes(t *testing.T) {
	tasks, log := newTasks(t, nil)
	task, err := tasks.Start(context.Background(), "ada", "greet", json.RawMessage(`{"name":"World"}`))
	if err != nil {
		t.Fatal(err)
	}
	var created map[string]any
	if err := json.Unmarshal(tasks.CreateTaskResult(task), &created); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"resultType", "taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
		if _, ok := created[k]; !ok {
			t.Errorf("CreateTaskResult lacks %s: %v", k, created)
		}
	}
	for _, k := range []string{"result", "error", "inputRequests", "requestState", "ttl", "pollInterval", "task"} {
		if _, ok := created[k]; ok {
			t.Errorf("CreateTaskResult carries %s: %v", k, created)
		}
	}
	if created["resultType"] != "task" || created["status"] != "working" {
		t.Errorf("CreateTaskResult = %v", created)
	}
	log.wait(t, task.ID, TaskCompleted)
	var d detailed
	rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
	if d.Status != TaskCompleted || d.Result == nil || len(d.Result.Content) == 0 || !strings.Contains(d.Result.Content[0].Text, "Hello, World!") {
		t.Fatalf("tasks/get = %+v", d)
	}
	if d.ResultType != "complete" || d.TTLMs != time.Hour.Milliseconds() || d.PollIntervalMs != 1000 || d.Error != nil {
		t.Errorf("tasks/get = %+v", d)
	}
	if _, err := time.Parse(time.RFC3339Nano, d.CreatedAt); err != nil {
		t.Errorf("createdAt %q: %v", d.CreatedAt, err)
	}
}

// TestTaskToolError: a tool that fails is a completed task whose result
// says isError; an unknown tool too (the caller's mistake, as tools/call
// reports it).
func TestTaskToolError(t *testing.T) {
	tasks, log := newTasks(t, nil)
	for _, name := range []string{"fail", "no_such_tool"} {
		task, err := tasks.Start(context.Background(), "ada", name, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		log.wait(t, task.ID, TaskCompleted)
		var d detailed
		rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
		if d.Result == nil || !d.Result.IsError || d.Error != nil {
			t.Errorf("%s: tasks/get = %+v", name, d)
		}
	}
}

// TestTaskInput: questions park the task in input_required, with the
// question as an elicitation/create input request; tasks/update answers
// them one by one, and the call resumes where it asked.
func TestTaskInput(t *testing.T) {
	tasks, log := newTasks(t, nil)
	task, err := tasks.Start(context.Background(), "ada", "danger", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	log.wait(t, task.ID, TaskInputRequired)
	var d detailed
	rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
	if d.Status != TaskInputRequired || len(d.InputRequests) != 1 || d.RequestSate != nil {
		t.Fatalf("tasks/get = %+v", d)
	}
	var key string
	for k, raw := range d.InputRequests {
		key = k
		var ir struct {
			Method string `json:"method"`
			Params struct {
				Message string `json:"message"`
			} `json:"params"`
		}
		if err := json.Unmarshal(raw, &ir); err != nil || ir.Method != "elicitation/create" || !strings.Contains(ir.Params.Message, "rm -rf build/") {
			t.Fatalf("input request %s: %+v (%v)", raw, ir, err)
		}
	}
	// An answer to a request never made is ignored; the task still waits.
	var ack map[string]any
	rpc(t, tasks, "ada", "tasks/update", `{"taskId":"`+task.ID+`","inputResponses":{"never-asked":{"action":"accept","content":{}}}}`, &ack)
	rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
	if d.Status != TaskInputRequired {
		t.Fatalf("after an unrelated answer: %+v", d)
	}
	rpc(t, tasks, "ada", "tasks/update", `{"taskId":"`+task.ID+`","inputResponses":{"`+key+`":{"action":"accept","content":{"decision":"allow"}}}}`, &ack)
	if len(ack) != 1 || ack["resultType"] != "complete" {
		t.Errorf("tasks/update ack = %v", ack)
	}
	log.wait(t, task.ID, TaskCompleted)
	rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
	if d.Result == nil || !strings.Contains(d.Result.Content[0].Text, "deleted (allow)") || d.InputRequests != nil {
		t.Fatalf("tasks/get = %+v", d)
	}
}

func TestTaskCancel(t *testing.T) {
	tasks, log := newTasks(t, nil)
	task, err := tasks.Start(context.Background(), "ada", "block", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var ack map[string]any
	rpc(t, tasks, "ada", "tasks/cancel", `{"taskId":"`+task.ID+`"}`, &ack)
	if len(ack) != 1 || ack["resultType"] != "complete" {
		t.Errorf("tasks/cancel ack = %v", ack)
	}
	log.wait(t, task.ID, TaskCancelled)
	// Cancelling a task that has ended is the same ack.
	rpc(t, tasks, "ada", "tasks/cancel", `{"taskId":"`+task.ID+`"}`, &ack)
	var d detailed
	rpc(t, tasks, "ada", "tasks/get", `{"taskId":"`+task.ID+`"}`, &d)
	if d.Status != TaskCancelled || d.Result != nil || d.Error != nil {
		t.Errorf("tasks/get = %+v", d)
	}
}

// TestTaskCancelWhileAsking: a task cancelled while it waits for an
// answer ends cancelled, its question withdrawn.
func TestTaskCancelWhileAsking(t *testing.T) {
	tasks, log := newTasks(t, nil)
	task, err := tasks.Start(context.Background(), "ada", "ask_name", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	log.wait(t, task.ID, TaskInputRequired)
	if err := tasks.Cancel(context.Background(), "ada", task.ID); err != nil {
		t.Fatal(err)
	}
	log.wait(t, task.ID, TaskCancelled)
	got, err := tasks.Get(context.Background(), "ada", task.ID)
	if err != nil || got.InputRequests != nil {
		t.Errorf("Get = %+v, %v", got, err)
	}
}

// TestTaskRefusals: bad requests get the extension's errors and change
// nothing; another owner's task is as unknown as a missing one.
func TestTaskRefusals(t *testing.T) {
	tasks, log := newTasks(t, nil)
	task, err := tasks.Start(context.Background(), "ada", "ask_name", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	log.wait(t, task.ID, TaskInputRequired)
	id := task.ID
	cases := []struct {
		name     string
		owner    string
		declared bool
		method   string
		params   string
		code     int64
	}{
		{"undeclared get", "ada", false, "tasks/get", `{"taskId":"` + id + `"}`, codeMissingCapable},
		{"undeclared update", "ada", false, "tasks/update", `{"taskId":"` + id + `","inputResponses":{}}`, codeMissingCapable},
		{"undeclared cancel", "ada", false, "tasks/cancel", `{"taskId":"` + id + `"}`, codeMissingCapable},
		{"unknown task", "ada", true, "tasks/get", `{"taskId":"nope"}`, jsonrpc.CodeInvalidParams},
		{"another owner's get", "eve", true, "tasks/get", `{"taskId":"` + id + `"}`, jsonrpc.CodeInvalidParams},
		{"another owner's update", "eve", true, "tasks/update", `{"taskId":"` + id + `","inputResponses":{}}`, jsonrpc.CodeInvalidParams},
		{"another owner's cancel", "eve", true, "tasks/cancel", `{"taskId":"` + id + `"}`, jsonrpc.CodeInvalidParams},
		{"no task id", "ada", true, "tasks/get", `{}`, jsonrpc.CodeInvalidParams},
		{"params not an object", "ada", true, "tasks/get", `[1]`, jsonrpc.CodeInvalidParams},
		{"no input responses", "ada", true, "tasks/update", `{"taskId":"` + id + `"}`, jsonrpc.CodeInvalidParams},
		{"an answer that is not one", "ada", true, "tasks/update", `{"taskId":"` + id + `","inputResponses":{"k":12345}}`, jsonrpc.CodeInvalidParams},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, rerr, ok := tasks.HandleRPC(context.Background(), c.owner, c.declared, c.method, json.RawMessage(c.params))
			if !ok || rerr == nil || rerr.Code != c.code {
				t.Fatalf("ok=%v error %v; want code %d", ok, rerr, c.code)
			}
			if c.code == codeMissingCapable && !DeclaresTasks(rerr.Data) {
				// The data names the capability it requires.
				var d struct {
					Required json.RawMessage `json:"requiredCapabilities"`
				}
				if json.Unmarshal(rerr.Data, &d) != nil || !DeclaresTasks(d.Required) {
					t.Errorf("error data %s does not name the extension", rerr.Data)
				}
			}
		})
	}
	if _, _, ok := tasks.HandleRPC(context.Background(), "ada", true, "tools/list", nil); ok {
		t.Error("tools/list is not the extension's")
	}
	got, err := tasks.Get(context.Background(), "ada", id)
	if err != nil || got.Status != TaskInputRequired {
		t.Errorf("after the refusals: %+v, %v", got, err)
	}
	if err := tasks.Cancel(context.Background(), "eve", id); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("Cancel by another owner: %v", err)
	}
}

// TestTaskTTL: a task is kept for its TTL, then forgotten (by a fake
// clock).
func TestTaskTTL(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	tasks, log := newTasks(t, &TaskOptions{TTL: time.Minute, Now: clock})
	task, err := tasks.Start(context.Background(), "ada", "greet", json.RawMessage(`{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	log.wait(t, task.ID, TaskCompleted)
	advance(59 * time.Second)
	if _, err := tasks.Get(context.Background(), "ada", task.ID); err != nil {
		t.Fatalf("within its TTL: %v", err)
	}
	advance(time.Second)
	if _, err := tasks.Get(context.Background(), "ada", task.ID); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("after its TTL: %v", err)
	}
}

func TestDeclaresTasks(t *testing.T) {
	cases := []struct {
		caps string
		want bool
	}{
		{`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, true},
		{`{"extensions":{"other":{}}}`, false},
		{`{"tasks":{}}`, false},
		{`{}`, false},
		{`null`, false},
		{`not json`, false},
	}
	for _, c := range cases {
		if got := DeclaresTasks(json.RawMessage(c.caps)); got != c.want {
			t.Errorf("DeclaresTasks(%s) = %v", c.caps, got)
		}
	}
}

func FuzzTaskRPC(f *testing.F) {
	f.Add("tasks/get", `{"taskId":"x"}`)
	f.Add("tasks/update", `{"taskId":"x","inputResponses":{"a":{"action":"accept"}}}`)
	f.Add("tasks/cancel", `{"taskId":""}`)
	tasks := NewTasks(nil, nil)
	f.Fuzz(func(t *testing.T, method, params string) {
		res, rerr, ok := tasks.HandleRPC(context.Background(), "ada", true, method, json.RawMessage(params))
		if ok && res == nil && rerr == nil {
			t.Fatal("neither a result nor an error")
		}
	})
}
