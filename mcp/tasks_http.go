package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TaskSupport says whether a tool's calls run as tasks.
type TaskSupport string

// The task support of a tool, as SEP-2663 names it.
const (
	// TaskForbidden: the tool's calls are always synchronous.
	TaskForbidden TaskSupport = "forbidden"
	// TaskOptional: a call is a task when the client declared the
	// extension, else synchronous.
	TaskOptional TaskSupport = "optional"
	// TaskRequired: a call is a task; a client that did not declare the
	// extension gets MissingRequiredClientCapability (-32021).
	TaskRequired TaskSupport = "required"
)

// TaskHTTPOptions configures TasksHandler.
type TaskHTTPOptions struct {
	// Support says which tools' calls run as tasks, by the name the
	// client calls them by; nil means none (only tasks/* are served).
	Support func(tool string) TaskSupport
	// Owner names the caller of a request, whose tasks only it may read,
	// answer and cancel; by default a digest of its Authorization header
	// (so each bearer token has its own tasks), the same for every
	// request without one.
	Owner func(r *http.Request) string
}

// maxTaskBody bounds the request bodies TasksHandler reads.
const maxTaskBody = 4 << 20

// TasksHandler serves MCP's tasks extension (SEP-2663) on the stateless
// wire of 2026-07-28, in front of next (a Server's Handler): it answers
// tasks/get, tasks/update and tasks/cancel, starts the tools/call
// requests of task-supporting tools as tasks (answering their
// CreateTaskResult), advertises the extension in server/discover, and
// passes every other request to next unchanged. A request declares the
// extension in its _meta's client capabilities; its Mcp-Method and
// Mcp-Name headers, when present, must match the body (HeaderMismatch,
// -32020).
func TasksHandler(next http.Handler, tasks *Tasks, opts *TaskHTTPOptions) http.Handler {
	var o TaskHTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.Support == nil {
		o.Support = func(string) TaskSupport { return TaskForbidden }
	}
	if o.Owner == nil {
		o.Owner = ownerByAuthorization
	}
	return &tasksHandler{next: next, tasks: tasks, opts: o}
}

func ownerByAuthorization(r *http.Request) string {
	a := r.Header.Get("Authorization")
	if a == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(a))
	return hex.EncodeToString(sum[:])
}

type tasksHandler struct {
	next  http.Handler
	tasks *Tasks
	opts  TaskHTTPOptions
}

// taskRequest is what TasksHandler reads of a JSON-RPC request.
type taskRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		TaskID    string          `json:"taskId"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ProtocolVersion    string          `json:"io.modelcontextprotocol/protocolVersion"`
			ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

func (h *tasksHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		h.next.ServeHTTP(w, r)
		return
	}
	orig := r.Body
	body, err := io.ReadAll(io.LimitReader(orig, maxTaskBody+1))
	if err != nil || len(body) > maxTaskBody {
		// Too large or unreadable: next reads it all and says so, as it
		// says it of any body.
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), orig), orig}
		h.next.ServeHTTP(w, r)
		return
	}
	r.Body = readCloser{bytes.NewReader(body), orig}
	var req taskRequest
	if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 || req.Params.Meta.ProtocolVersion == "" {
		h.next.ServeHTTP(w, r) // a batch, a notification, the older wire: not the extension's
		return
	}
	declared := DeclaresTasks(req.Params.Meta.ClientCapabilities)
	switch req.Method {
	case methodTasksGet, methodTasksUpdate, methodTasksCancel:
		if !h.headersMatch(w, r, &req, req.Params.TaskID) {
			return
		}
		res, rerr, _ := h.tasks.HandleRPC(r.Context(), h.opts.Owner(r), declared, req.Method, rawParams(body))
		writeRPC(w, req.ID, res, rerr)
		return
	case "tools/call":
		support := h.opts.Support(req.Params.Name)
		if support == TaskForbidden || support == "" || (!declared && support == TaskOptional) {
			break
		}
		if !h.headersMatch(w, r, &req, req.Params.Name) {
			return
		}
		if !declared {
			writeRPC(w, req.ID, nil, MissingTasksCapability())
			return
		}
		task, err := h.tasks.Start(r.Context(), h.opts.Owner(r), req.Params.Name, req.Params.Arguments)
		if err != nil {
			writeRPC(w, req.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
			return
		}
		writeRPC(w, req.ID, h.tasks.CreateTaskResult(task), nil)
		return
	case "server/discover":
		h.discover(w, r)
		return
	}
	h.next.ServeHTTP(w, r)
}

// headersMatch refuses a request whose Mcp-Method or Mcp-Name header
// disagrees with its body (SEP-2243), with HeaderMismatch.
func (h *tasksHandler) headersMatch(w http.ResponseWriter, r *http.Request, req *taskRequest, name string) bool {
	if m := r.Header.Get("Mcp-Method"); m != "" && m != req.Method {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		writeRPC(w, req.ID, nil, &jsonrpc.Error{Code: codeHeaderMismatch, Message: "the Mcp-Method header does not match the request's method"})
		return false
	}
	if n := r.Header.Get("Mcp-Name"); n != "" && n != name {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		writeRPC(w, req.ID, nil, &jsonrpc.Error{Code: codeHeaderMismatch, Message: "the Mcp-Name header does not match the request's name"})
		return false
	}
	return true
}

// codeHeaderMismatch is HeaderMismatch (SEP-2243).
const codeHeaderMismatch = -32020

// discover passes server/discover to next and adds the tasks extension to
// the capabilities it answers, whether the answer is JSON or an event
// stream.
func (h *tasksHandler) discover(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	h.next.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		var out bytes.Buffer
		for _, line := range strings.SplitAfter(string(body), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				end := len(data) - len(strings.TrimRight(data, "\r\n"))
				line = "data: " + string(withTasksExtension([]byte(data[:len(data)-end]))) + data[len(data)-end:]
			}
			out.WriteString(line)
		}
		body = out.Bytes()
	} else {
		body = withTasksExtension(body)
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// withTasksExtension adds the tasks extension to the capabilities of a
// server/discover answer; anything else is returned as it is.
func withTasksExtension(msg []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(m["result"], &res) != nil {
		return msg
	}
	var caps map[string]json.RawMessage
	if c := res["capabilities"]; c != nil && json.Unmarshal(c, &caps) != nil {
		return msg
	}
	if caps == nil {
		caps = map[string]json.RawMessage{}
	}
	var ext map[string]json.RawMessage
	if e := caps["extensions"]; e != nil && json.Unmarshal(e, &ext) != nil {
		return msg
	}
	if ext == nil {
		ext = map[string]json.RawMessage{}
	}
	ext[TasksExtension] = json.RawMessage(`{}`)
	caps["extensions"], _ = json.Marshal(ext)
	res["capabilities"], _ = json.Marshal(caps)
	m["result"], _ = json.Marshal(res)
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

func rawParams(body []byte) json.RawMessage {
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Params
}

// writeRPC writes a JSON-RPC answer: result, or rerr.
func writeRPC(w http.ResponseWriter, id, result json.RawMessage, rerr *jsonrpc.Error) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		e := map[string]any{"code": rerr.Code, "message": rerr.Message}
		if len(rerr.Data) > 0 {
			e["data"] = rerr.Data
		}
		msg["error"] = e
	} else {
		msg["result"] = result
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	_ = json.NewEncoder(w).Encode(msg)
}

// readCloser reads r and closes the request's own body.
type readCloser struct {
	io.Reader
	io.Closer
}
