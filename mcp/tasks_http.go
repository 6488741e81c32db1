package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
	// HTTP are the options the server's handler (next) was made with: the
	// Host, Origin and bearer token checks of Server.Handler are made
	// before TasksHandler answers anything itself, and its body limit
	// applies. nil means HTTPOptions' defaults (no token: give it the
	// server's when it has one).
	HTTP *HTTPOptions
	// Intake names, for a call of a task-supporting tool, the input
	// requests to gather before its task starts (SEP-2322's loop, then the
	// task): a tools/call that does not answer them all gets an
	// input_required result with the ones it lacks (no requestState:
	// nothing has run), and the call that answers them all starts the
	// task, whose AskClient of the same keys is answered from them. nil,
	// or no requests, starts the task at once.
	Intake func(tool string, args json.RawMessage) sdk.InputRequestMap
	// Owner names the caller of a request, whose tasks only it may read,
	// answer and cancel; by default a digest of its Authorization header
	// (so each bearer token has its own tasks), the same for every
	// request without one.
	Owner func(r *http.Request) string
}

// TasksHandler serves MCP's tasks extension (SEP-2663) on the stateless
// wire of 2026-07-28, in front of next (a Server's Handler): it answers
// tasks/get, tasks/update and tasks/cancel, starts the tools/call
// requests of task-supporting tools as tasks (answering their
// CreateTaskResult), advertises the extension in server/discover, and
// passes every other request to next unchanged. It makes the server's
// Host, Origin and token checks first (TaskHTTPOptions.HTTP). A request declares the
// extension in its _meta's client capabilities; its Mcp-Method,
// Mcp-Name headers, when present, must match the body, and its
// Mcp-Protocol-Version header must be there and match _meta's version
// (HeaderMismatch, -32020), as Server.Handler requires of every request. A request whose _meta names a
// version the SDK does not serve on the stateless wire is next's to
// answer (UnsupportedProtocolVersion): it starts no task.
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
	return &tasksHandler{next: next, tasks: tasks, opts: o, guard: &guard{opts: o.HTTP.withDefaults()}}
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
	guard *guard // the checks of Server.Handler, made first
}

// taskRequest is what TasksHandler reads of a JSON-RPC request.
type taskRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		TaskID    string          `json:"taskId"`
		Arguments json.RawMessage `json:"arguments"`
		// InputResponses are the answers of a retried call, read only
		// when the tool has an intake.
		InputResponses json.RawMessage `json:"inputResponses"`
		Meta           struct {
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
	// The server's checks come first: a request they refuse never
	// reaches a task.
	if !h.guard.allowed(w, r) {
		return
	}
	limit := h.guard.opts.MaxBodyBytes
	orig := r.Body
	body, err := io.ReadAll(io.LimitReader(orig, limit+1))
	if err != nil || int64(len(body)) > limit {
		// Too large or unreadable: next reads it all and says so, as it
		// says it of any body.
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), orig), orig}
		h.next.ServeHTTP(w, r)
		return
	}
	r.Body = readCloser{bytes.NewReader(body), orig}
	var req taskRequest
	if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 || !statelessRevision(req.Params.Meta.ProtocolVersion) {
		// A batch, a notification, the older wire: not the extension's.
		// A _meta version the SDK does not serve is next's to refuse
		// (UnsupportedProtocolVersion), before any task starts.
		h.next.ServeHTTP(w, r)
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
		call := &TaskCall{Tool: req.Params.Name, Arguments: req.Params.Arguments, ClientCapabilities: clientCapabilities(req.Params.Meta.ClientCapabilities)}
		if h.opts.Intake != nil {
			if intake := h.opts.Intake(req.Params.Name, req.Params.Arguments); len(intake) > 0 {
				given, ask, rerr := gatherIntake(intake, call.ClientCapabilities, req.Params.InputResponses)
				if rerr != nil {
					writeRPC(w, req.ID, nil, rerr)
					return
				}
				if ask != nil {
					writeRPC(w, req.ID, ask, nil)
					return
				}
				call.Given = given
			}
		}
		task, err := h.tasks.StartCall(r.Context(), h.opts.Owner(r), call)
		if err != nil {
			writeRPC(w, req.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
			return
		}
		writeRPC(w, req.ID, h.tasks.CreateTaskResult(task), nil)
		return
	case "server/discover":
		h.rewrite(w, r, withTasksExtension)
		return
	case "tools/list":
		h.rewrite(w, r, h.withTaskSupport)
		return
	}
	h.next.ServeHTTP(w, r)
}

// statelessRevisions are the revisions of the stateless wire the SDK
// serves (2026-07-28 and later), on which the extension is served.
var statelessRevisions = slices.DeleteFunc(sdk.SupportedProtocolVersions(), func(v string) bool { return v < "2026-07-28" })

// statelessRevision reports whether a request's _meta version v is one
// of statelessRevisions.
func statelessRevision(v string) bool { return slices.Contains(statelessRevisions, v) }

// headersMatch refuses a request whose Mcp-Method, Mcp-Name or
// Mcp-Protocol-Version header disagrees with its body (SEP-2243), or
// that lacks the Mcp-Protocol-Version header, with HeaderMismatch.
func (h *tasksHandler) headersMatch(w http.ResponseWriter, r *http.Request, req *taskRequest, name string) bool {
	if rerr := versionHeaderMismatch(r.Header.Get("Mcp-Protocol-Version"), req.Params.Meta.ProtocolVersion); rerr != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		writeRPC(w, req.ID, nil, rerr)
		return false
	}
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

// versionHeaderMismatch is HeaderMismatch for a request whose _meta
// names the protocol version meta while its Mcp-Protocol-Version header
// (header) is missing or names another: on the 2026-07-28 transport the
// header must be there and match _meta. It is nil when they agree and
// when _meta names no version (the older wire, where the header alone
// counts).
func versionHeaderMismatch(header, meta string) *jsonrpc.Error {
	switch {
	case meta == "" || header == meta:
		return nil
	case header == "":
		return &jsonrpc.Error{Code: codeHeaderMismatch, Message: fmt.Sprintf("the Mcp-Protocol-Version header is missing: a request whose _meta names protocol version %q must carry it", meta)}
	default:
		return &jsonrpc.Error{Code: codeHeaderMismatch, Message: fmt.Sprintf("the Mcp-Protocol-Version header %q does not match the request's _meta version %q", header, meta)}
	}
}

// rewrite passes a request to next and changes each JSON-RPC message of
// its answer with change, whether the answer is JSON or an event stream:
// server/discover gets the tasks extension in its capabilities, tools/list
// each tool's task support.
func (h *tasksHandler) rewrite(w http.ResponseWriter, r *http.Request, change func([]byte) []byte) {
	rec := httptest.NewRecorder()
	h.next.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		var out bytes.Buffer
		for _, line := range strings.SplitAfter(string(body), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				end := len(data) - len(strings.TrimRight(data, "\r\n"))
				line = "data: " + string(change([]byte(data[:len(data)-end]))) + data[len(data)-end:]
			}
			out.WriteString(line)
		}
		body = out.Bytes()
	} else {
		body = change(body)
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
	return editResult(msg, func(res map[string]json.RawMessage) bool {
		var caps map[string]json.RawMessage
		if c := res["capabilities"]; c != nil && json.Unmarshal(c, &caps) != nil {
			return false
		}
		if caps == nil {
			caps = map[string]json.RawMessage{}
		}
		var ext map[string]json.RawMessage
		if e := caps["extensions"]; e != nil && json.Unmarshal(e, &ext) != nil {
			return false
		}
		if ext == nil {
			ext = map[string]json.RawMessage{}
		}
		ext[TasksExtension] = json.RawMessage(`{}`)
		caps["extensions"], _ = json.Marshal(ext)
		res["capabilities"], _ = json.Marshal(caps)
		return true
	})
}

// withTaskSupport adds to each tool of a tools/list answer the task
// support its calls have, as execution.taskSupport ("forbidden",
// "optional", "required"), so that a client knows before it calls which
// calls become tasks. Anything else is returned as it is.
func (h *tasksHandler) withTaskSupport(msg []byte) []byte {
	return editResult(msg, func(res map[string]json.RawMessage) bool {
		var tools []map[string]json.RawMessage
		if json.Unmarshal(res["tools"], &tools) != nil {
			return false
		}
		for _, t := range tools {
			var name string
			if json.Unmarshal(t["name"], &name) != nil {
				return false
			}
			support := h.opts.Support(name)
			if support == "" {
				support = TaskForbidden
			}
			var exec map[string]json.RawMessage
			if e := t["execution"]; e != nil && json.Unmarshal(e, &exec) != nil {
				return false
			}
			if exec == nil {
				exec = map[string]json.RawMessage{}
			}
			exec["taskSupport"], _ = json.Marshal(support)
			t["execution"], _ = json.Marshal(exec)
		}
		res["tools"], _ = json.Marshal(tools)
		return true
	})
}

// editResult changes the result object of a JSON-RPC answer msg with
// edit, which reports whether it could; msg is returned as it is when it
// is not an answer with an object result, or when edit could not.
func editResult(msg []byte, edit func(res map[string]json.RawMessage) bool) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(m["result"], &res) != nil || res == nil || !edit(res) {
		return msg
	}
	m["result"], _ = json.Marshal(res)
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

// maxIntakeResponses bounds the answers a call may bring for its intake.
const maxIntakeResponses = 64

// gatherIntake reads the answers a tools/call brings (raw, its
// inputResponses) to the intake's requests: the answers, when all are
// there; else the input_required result that asks for the ones missing.
// Answers of requests the intake did not make are ignored. Unreadable
// inputResponses, too many of them, an answer of the wrong kind (a roots
// list for an elicitation), or requests the client declared no
// capability for are the JSON-RPC error, and nothing starts.
func gatherIntake(intake sdk.InputRequestMap, caps *sdk.ClientCapabilities, raw json.RawMessage) (sdk.InputResponseMap, json.RawMessage, *jsonrpc.Error) {
	if err := checkCapabilities(caps, intake); err != nil {
		var missing *MissingClientCapabilityError
		errors.As(err, &missing)
		return nil, nil, missingCapabilities(missing.Capabilities)
	}
	var byKey map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &byKey); err != nil {
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses must be an object of answers by request key"}
		}
		if len(byKey) > maxIntakeResponses {
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses has %d answers; the call asked for %d", len(byKey), len(intake))}
		}
	}
	given := sdk.InputResponseMap{}
	missing := sdk.InputRequestMap{}
	for k, r := range intake {
		a, ok := byKey[k]
		if !ok {
			missing[k] = r
			continue
		}
		v, err := answerDecoder(r)(a)
		if err != nil {
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses[%q]: %v", shortID(k), err)}
		}
		given[k] = v.(sdk.InputResponse)
	}
	if len(missing) == 0 {
		return given, nil, nil
	}
	reqs, err := json.Marshal(missing)
	if err != nil {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	res, _ := json.Marshal(map[string]json.RawMessage{"resultType": json.RawMessage(`"input_required"`), "inputRequests": reqs})
	return nil, res, nil
}

// missingCapabilities is MissingRequiredClientCapability (-32021) for
// client capabilities (elicitation, sampling, roots).
func missingCapabilities(names []string) *jsonrpc.Error {
	req := map[string]any{}
	for _, n := range names {
		req[n] = map[string]any{}
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": req})
	return &jsonrpc.Error{Code: codeMissingCapable, Message: "the client did not declare " + strings.Join(names, ", "), Data: data}
}

// clientCapabilities reads the client capabilities of a request's _meta;
// nil when there are none or they cannot be read.
func clientCapabilities(raw json.RawMessage) *sdk.ClientCapabilities {
	if len(raw) == 0 {
		return nil
	}
	var c sdk.ClientCapabilities
	if json.Unmarshal(raw, &c) != nil {
		return nil
	}
	// The roots capability is deprecated from 2026-07-28 on (SEP-2577)
	// and still what AskClient's roots/list requests need.
	var roots struct {
		//lint:ignore SA1019 see above
		Roots *sdk.RootCapabilities `json:"roots"`
	}
	if json.Unmarshal(raw, &roots) == nil && roots.Roots != nil {
		//lint:ignore SA1019 see above
		c.RootsV2 = roots.Roots
	}
	return &c
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
