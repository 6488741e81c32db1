package web

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"strings"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
)

//go:embed static
var assets embed.FS

var errEOF = io.EOF

func (s *Server) routes() {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "static")
	files := http.FileServerFS(static)
	mux.HandleFunc("/{$}", s.handleIndex)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { health(w, true, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		ready := !s.draining.Load()
		health(w, ready, map[bool]string{true: "ready", false: "draining"}[ready])
	})
	mux.Handle("/static/", http.StripPrefix("/static/", s.staticOnly(files)))
	mux.HandleFunc("/api/tools", s.handleTools)
	mux.HandleFunc("/api/state", s.handleState)
	mux.HandleFunc("/api/events", s.handleEvents)
	mux.HandleFunc("/api/calls", s.handleCalls)
	mux.HandleFunc("/api/calls/{id}/cancel", s.handleCancel)
	mux.HandleFunc("/api/requests/{id}/answer", s.handleAnswer)
	mux.HandleFunc("/api/grants/revoke", s.handleRevoke)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+truncate(r.URL.Path, 100))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r)
	})
	s.mux = mux
}

// staticOnly serves the assets (not index.html, which is a template, and
// no directory listings) to GET and HEAD.
func (s *Server) staticOnly(files http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "index.html" {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// health answers /healthz and /readyz: a word, nothing about the server;
// no sign-in needed (probes of a load balancer or Kubernetes).
func health(w http.ResponseWriter, ok bool, word string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = io.WriteString(w, word+"\n")
}

// handleIndex serves the page to a signed-in browser; /?token= signs a
// browser in (auth.go); others get a short sign-in hint.
func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if tok := r.URL.Query().Get("token"); tok != "" {
		s.signIn(w, r, tok)
		return
	}
	if !s.auth.signedIn(r) {
		s.signInHint(w, "This browser is not signed in.")
		return
	}
	var buf bytes.Buffer
	err := s.page.Execute(&buf, map[string]string{"Title": s.opts.Title})
	if err != nil {
		s.log.Error("web: rendering the page", "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// ToolView is a tool as GET /api/tools lists it.
type ToolView struct {
	Name string `json:"name"`
	// Title is a name for people (the tool's title, else its
	// annotations').
	Title        string            `json:"title,omitempty"`
	Description  string            `json:"description"`
	InputSchema  json.RawMessage   `json:"input_schema"`
	Interactions tool.Capabilities `json:"interactions"`
	// MayAsk lists the kinds of request the page may have to answer for
	// the tool (confirm, text, secret, select, form): what its source
	// shows it asks when that is known (tool.Info.DetectedInteractions),
	// else what it declares.
	MayAsk []tool.Kind `json:"may_ask"`
	// Annotations are the tool's hints (read-only, destructive...), nil
	// when it declares none.
	Annotations *tool.Annotations `json:"annotations,omitempty"`
	Source      string            `json:"source,omitempty"`
	// ParsedViaRegexFallback marks tools of a file that is not valid
	// Python.
	ParsedViaRegexFallback bool `json:"_parsed_via_regex_fallback,omitempty"`
}

// LibraryView is a library and its tools, in inventory order.
type LibraryView struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	Icon        string     `json:"icon,omitempty"`
	Tools       []ToolView `json:"tools"`
}

// ToolsView is the body of GET /api/tools.
type ToolsView struct {
	Libraries   []LibraryView     `json:"libraries"`
	Diagnostics []tool.Diagnostic `json:"diagnostics,omitempty"`
}

func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) || !s.guardAPI(w, r) {
		return
	}
	v, err := s.toolsView(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "listing the tools: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) toolsView(ctx context.Context) (*ToolsView, error) {
	infos, err := s.ts.Tools(ctx)
	if err != nil {
		return nil, err
	}
	v := &ToolsView{Libraries: []LibraryView{}}
	index := map[string]int{}
	for _, in := range infos {
		id := in.Library.ID
		i, ok := index[id]
		if !ok {
			name := in.Library.Name
			if name == "" {
				name = id
			}
			if name == "" {
				name = "(no library)"
			}
			i = len(v.Libraries)
			index[id] = i
			v.Libraries = append(v.Libraries, LibraryView{ID: id, Name: name, Description: in.Library.Description,
				Icon: in.Library.Icon, Tools: []ToolView{}})
		}
		schema := in.InputSchema
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		title := in.Title
		if title == "" && in.Annotations != nil {
			title = in.Annotations.Title
		}
		v.Libraries[i].Tools = append(v.Libraries[i].Tools, ToolView{Name: in.Name, Title: title, Description: in.Description,
			InputSchema: schema, Interactions: in.Interactions, MayAsk: mayAsk(&in), Annotations: in.Annotations,
			Source: in.Source, ParsedViaRegexFallback: in.ParsedViaRegexFallback})
	}
	switch d := s.ts.(type) {
	case interface {
		Diagnostics(context.Context) []tool.Diagnostic
	}:
		v.Diagnostics = d.Diagnostics(ctx)
	case interface{ Diagnostics() []tool.Diagnostic }:
		v.Diagnostics = d.Diagnostics()
	}
	return v, nil
}

// mayAsk lists the kinds of request a tool may make, as people should
// expect them: detected from its source when known, else declared.
func mayAsk(in *tool.Info) []tool.Kind {
	c := in.Interactions
	if in.DetectedInteractions != nil {
		c = *in.DetectedInteractions
	}
	kinds := []tool.Kind{}
	for _, k := range []struct {
		on   bool
		kind tool.Kind
	}{{c.Confirm, tool.KindConfirm}, {c.Text || c.MultilineText, tool.KindText}, {c.Secret, tool.KindSecret},
		{c.Select, tool.KindSelect}, {c.Form, tool.KindForm}} {
		if k.on {
			kinds = append(kinds, k.kind)
		}
	}
	return kinds
}

// State is the body of GET /api/state: everything a page needs to draw
// itself after a (re)load. Seq is the last event it reflects; the page
// follows the stream from there.
type State struct {
	Seq     uint64         `json:"seq"`
	Pending []hitl.Pending `json:"pending"`
	Calls   []Call         `json:"calls"`
	Grants  []hitl.Grant   `json:"grants"`
	Events  []Event        `json:"events"`
}

// stateEvents is how much of the log a page gets back after a reload.
const stateEvents = 500

func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) || !s.guardAPI(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, s.State())
}

// State returns what the page shows: pending requests, recent calls,
// always approvals and the latest events.
func (s *Server) State() *State {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The pending list is read under the log's lock: every broker event
	// logged so far happened before it, and every later one gets a
	// higher seq, so the page applying the stream from Seq converges.
	st := &State{Seq: s.hub.seq, Pending: s.broker.Pending(), Grants: s.broker.Grants(), Events: s.hub.last(stateEvents)}
	if st.Pending == nil {
		st.Pending = []hitl.Pending{}
	}
	if st.Grants == nil {
		st.Grants = []hitl.Grant{}
	}
	st.Calls = make([]Call, 0, len(s.order))
	for _, id := range s.order {
		st.Calls = append(st.Calls, s.calls[id].Call)
	}
	if st.Events == nil {
		st.Events = []Event{}
	}
	return st
}

// answerRequest is the body of POST /api/requests/{id}/answer.
type answerRequest struct {
	// Action is submit, decline or cancel.
	Action tool.Action `json:"action"`
	// Value is the answer of a submit: "allow" or "always" for a
	// confirmation (a rejection is a decline), a string for text, secret
	// and select, an object for a form.
	Value json.RawMessage `json:"value"`
	// Reason is the person's feedback on a decline (fed back to the LLM
	// for a rejected confirmation).
	Reason string `json:"reason"`
}

// handleAnswer resolves a pending request. The answer is never echoed
// back, logged or published: the broker's event carries it masked.
func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) || !s.guardAPI(w, r) {
		return
	}
	id := r.PathValue("id")
	var body answerRequest
	if !s.decodeBody(w, r, &body) {
		return
	}
	var req *tool.Request
	for _, p := range s.broker.Pending() {
		if p.Request.ID == id {
			req = p.Request
			break
		}
	}
	if req == nil {
		s.notPending(w, id)
		return
	}
	resp := tool.Response{ID: id, Action: body.Action, Reason: body.Reason}
	switch body.Action {
	case tool.Submit:
		v, err := answerValue(req.Kind, body.Value)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		resp.Value = v
	case tool.Decline, tool.Cancel:
	default:
		writeError(w, http.StatusBadRequest, `"action" must be submit, decline or cancel`)
		return
	}
	err := s.broker.Answer(id, resp)
	var inv *tool.InvalidInteractionError
	switch {
	case err == nil:
		s.mu.Lock()
		s.resolved.add(id, string(hitl.EventAnswered), false)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"answered": id})
	case errors.Is(err, hitl.ErrNotPending):
		s.notPending(w, id)
	case errors.As(err, &inv):
		writeError(w, http.StatusBadRequest, inv.Message)
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// notPending refuses an answer to a request that does not wait: 409 when
// it was resolved already (answered twice, timed out, withdrawn), 404
// when it is unknown.
func (s *Server) notPending(w http.ResponseWriter, id string) {
	s.mu.Lock()
	res, ok := s.resolved.how[id]
	s.mu.Unlock()
	if ok {
		writeError(w, http.StatusConflict, "the request is no longer pending ("+strings.ReplaceAll(res.how, "_", " ")+")")
		return
	}
	writeError(w, http.StatusNotFound, "no such pending request: "+truncate(id, 100))
}

// answerValue decodes the value of a submitted answer for a request of
// kind k.
func answerValue(k tool.Kind, raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New(`a submit needs a "value"`)
	}
	if k == tool.KindForm {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return nil, errors.New(`"value" of a form answer must be a JSON object`)
		}
		return raw, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf(`"value" of a %s answer must be a string`, k)
	}
	return s, nil
}

// revokeRequest is the body of POST /api/grants/revoke.
type revokeRequest struct {
	Library string `json:"library"`
	Label   string `json:"label"`
	// All revokes every always approval.
	All bool `json:"all"`
}

func (s *Server) handleRevoke(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) || !s.guardAPI(w, r) {
		return
	}
	var body revokeRequest
	if !s.decodeBody(w, r, &body) {
		return
	}
	if body.All {
		writeJSON(w, http.StatusOK, map[string]int{"revoked": s.broker.RevokeAll()})
		return
	}
	if !s.broker.Revoke(body.Library, body.Label) {
		writeError(w, http.StatusNotFound, "no such always approval")
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"revoked": 1})
}

// apiError is the body of every error answer of the API.
type apiError struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, apiError{Error: msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		data, _ = json.Marshal(apiError{Error: "encoding the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

// allow writes 405 and reports false when r's method is not method.
func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, http.StatusMethodNotAllowed, "method "+truncate(r.Method, 20)+" not allowed; use "+method)
	return false
}

func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

func writeDecodeError(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", tooBig.Limit))
	case errors.As(err, &syn):
		writeError(w, http.StatusBadRequest, fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn))
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the body"
		}
		writeError(w, http.StatusBadRequest, fmt.Sprintf("wrong type: %s must be %s, not %s", field, jsonKind(typ.Type.Kind().String()), typ.Value))
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "malformed JSON: empty body")
	case errors.Is(err, io.ErrUnexpectedEOF):
		writeError(w, http.StatusBadRequest, "malformed JSON: unexpected end")
	default:
		// Unknown fields and the like: the decoder's words are clear.
		writeError(w, http.StatusBadRequest, "malformed request: "+err.Error())
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	}
	return "a " + goKind
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + "…"
}
