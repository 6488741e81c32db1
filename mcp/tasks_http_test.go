package mcp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// tasksFront serves TasksHandler in front of a stand-in for the server's
// handler, which answers server/discover (as JSON, or as an event stream
// when asked) and records every other request it gets.
func tasksFront(t *testing.T) (*httptest.Server, *[]string, *Tasks, *statusLog) {
	t.Helper()
	tasks, log := newTasks(t, nil)
	var passed []string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method == "server/discover" {
			msg := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`
			if r.Header.Get("Accept") == "text/event-stream" {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: message\ndata: "+msg+"\n\n")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, msg)
			return
		}
		passed = append(passed, m.Method)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"resultType":"complete","content":[]}}`)
	})
	support := map[string]TaskSupport{"block": TaskOptional, "greet": TaskRequired}
	srv := httptest.NewServer(TasksHandler(next, tasks, &TaskHTTPOptions{Support: func(n string) TaskSupport { return support[n] }}))
	t.Cleanup(srv.Close)
	return srv, &passed, tasks, log
}

const declaredMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
const plainMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// postRPC sends one JSON-RPC request and returns the HTTP status and the
// decoded answer. It sends Mcp-Protocol-Version 2026-07-28 unless header
// names another, or none (an empty value).
func postRPC(t *testing.T, url, body string, header map[string]string) (int, map[string]json.RawMessage) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		_, raw0, _ := strings.Cut(string(raw), "data: ")
		raw = []byte(strings.TrimSpace(raw0))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("answer %q: %v", raw, err)
	}
	return resp.StatusCode, m
}

func rpcCode(m map[string]json.RawMessage) int64 {
	var e struct {
		Code int64 `json:"code"`
	}
	_ = json.Unmarshal(m["error"], &e)
	return e.Code
}

func TestTasksHandler(t *testing.T) {
	srv, passed, _, log := tasksFront(t)

	// A task-supporting tool called by a client that declared the
	// extension becomes a task; tasks/get and tasks/cancel follow it.
	_, m := postRPC(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{},`+declaredMeta+`}}`, nil)
	var created struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := json.Unmarshal(m["result"], &created); err != nil || created.ResultType != "task" || created.TaskID == "" {
		t.Fatalf("tools/call answered %s", m["result"])
	}
	id := created.TaskID
	_, m = postRPC(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"`+id+`",`+declaredMeta+`}}`, map[string]string{"Mcp-Method": "tasks/get", "Mcp-Name": id})
	if !strings.Contains(string(m["result"]), `"status":"working"`) {
		t.Errorf("tasks/get answered %s", m["result"])
	}
	_, m = postRPC(t, srv.URL, `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"`+id+`",`+declaredMeta+`}}`, nil)
	if string(m["result"]) != `{"resultType":"complete"}` {
		t.Errorf("tasks/cancel answered %s", m["result"])
	}
	log.wait(t, id, TaskCancelled)

	cases := []struct {
		name   string
		body   string
		header map[string]string
		status int
		code   int64
	}{
		{"Mcp-Name disagrees", `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"` + id + `",` + declaredMeta + `}}`, map[string]string{"Mcp-Name": "another"}, 400, codeHeaderMismatch},
		{"Mcp-Protocol-Version missing", `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"` + id + `",` + declaredMeta + `}}`, map[string]string{"Mcp-Protocol-Version": ""}, 400, codeHeaderMismatch},
		{"Mcp-Protocol-Version of the older wire", `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"` + id + `",` + declaredMeta + `}}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, 400, codeHeaderMismatch},
		{"Mcp-Method disagrees", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"block",` + declaredMeta + `}}`, map[string]string{"Mcp-Method": "tasks/get"}, 400, codeHeaderMismatch},
		{"tasks/get undeclared", `{"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"taskId":"` + id + `",` + plainMeta + `}}`, nil, 200, codeMissingCapable},
		{"a required task undeclared", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x"},` + plainMeta + `}}`, nil, 200, codeMissingCapable},
		{"another token's task", `{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"` + id + `",` + declaredMeta + `}}`, map[string]string{"Authorization": "Bearer other"}, 200, -32602},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, m := postRPC(t, srv.URL, c.body, c.header)
			if status != c.status || rpcCode(m) != c.code {
				t.Errorf("HTTP %d, %s; want %d with code %d", status, m["error"], c.status, c.code)
			}
		})
	}
	if len(*passed) != 0 {
		t.Errorf("the server's handler got %v", *passed)
	}

	// Everything else reaches the server's handler: an optional tool of a
	// client that did not declare the extension, a tool without task
	// support, the older wire.
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"block","arguments":{},` + plainMeta + `}}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{},` + declaredMeta + `}}`,
		`{"jsonrpc":"2.0","id":11,"method":"tasks/get","params":{"taskId":"x"}}`,
		`[{"jsonrpc":"2.0","id":12,"method":"tasks/get","params":{"taskId":"x"}}]`,
		`not json`,
	} {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if want := []string{"tools/call", "tools/call", "tasks/get", "", ""}; strings.Join(*passed, ",") != strings.Join(want, ",") {
		t.Errorf("the server's handler got %q; want %q", *passed, want)
	}
}

// TestTasksDiscover: server/discover says the server serves the
// extension, whether it answers as JSON or as an event stream.
func TestTasksDiscover(t *testing.T) {
	srv, _, _, _ := tasksFront(t)
	for _, accept := range []string{"application/json", "text/event-stream"} {
		_, m := postRPC(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+plainMeta+`}}`, map[string]string{"Accept": accept})
		var res struct {
			Capabilities json.RawMessage `json:"capabilities"`
		}
		if err := json.Unmarshal(m["result"], &res); err != nil || !DeclaresTasks(res.Capabilities) || !strings.Contains(string(res.Capabilities), `"tools"`) {
			t.Errorf("%s: server/discover answered %s", accept, m["result"])
		}
	}
}

func FuzzWithTasksExtension(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"extensions":{"x":{}}}}}`)
	f.Add(`{"result":{"capabilities":[]}}`)
	f.Add(`{"error":{}}`)
	f.Fuzz(func(t *testing.T, msg string) {
		out := withTasksExtension([]byte(msg))
		if string(out) != msg && !json.Valid(out) {
			t.Fatalf("%q became %q", msg, out)
		}
	})
}

// TestTasksHandlerChecksFirst: the server's token, Host and Origin checks
// are made before the extension answers: a request they refuse never
// reaches a task.
func TestTasksHandlerChecksFirst(t *testing.T) {
	tasks, _ := newTasks(t, nil)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("the server's handler was reached") })
	srv := httptest.NewServer(TasksHandler(next, tasks, &TaskHTTPOptions{
		HTTP:    &HTTPOptions{Token: "s3cret"},
		Support: func(string) TaskSupport { return TaskRequired },
	}))
	t.Cleanup(srv.Close)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x"},` + declaredMeta + `}}`
	cases := []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"another token", map[string]string{"Authorization": "Bearer guess"}, http.StatusUnauthorized},
		{"a foreign origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://evil.example"}, http.StatusForbidden},
		{"the token", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(call))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("HTTP %d %s; want %d", resp.StatusCode, body, c.want)
			}
			if c.want == http.StatusOK && !strings.Contains(string(body), `"resultType":"task"`) {
				t.Errorf("answer %s", body)
			}
		})
	}
}
