package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/web"
)

func TestPage(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	cookie := signIn(t, e)
	r := e.do("GET", "/", "", web.TokenHeader, "", "Cookie", cookie)
	mustStatus(t, r, http.StatusOK)
	html := string(r.body)
	if strings.Contains(html, e.srv.Token()) || strings.Contains(html, "lcp-token") {
		t.Errorf("the page carries a token:\n%s", html)
	}
	// No inline script: every <script> has a src.
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(html, -1) {
		if !strings.Contains(tag, `src="static/`) {
			t.Errorf("inline script: %s", tag)
		}
	}
	csp := r.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q", got)
	}
	for _, asset := range []string{"/static/app.js", "/static/app.css"} {
		r := e.do("GET", asset, "")
		mustStatus(t, r, http.StatusOK)
		if len(r.body) < 1000 {
			t.Errorf("%s: %d bytes", asset, len(r.body))
		}
	}
	mustStatus(t, e.do("GET", "/static/index.html", ""), http.StatusNotFound)
	mustStatus(t, e.do("GET", "/static/", ""), http.StatusNotFound)
	mustStatus(t, e.do("GET", "/nothing", ""), http.StatusNotFound)
	mustStatus(t, e.do("POST", "/", "{}"), http.StatusMethodNotAllowed)
}

func TestTools(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	r := e.do("GET", "/api/tools", "")
	mustStatus(t, r, http.StatusOK)
	var v web.ToolsView
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Libraries) != 1 {
		t.Fatalf("libraries: %+v", v.Libraries)
	}
	lib := v.Libraries[0]
	if lib.ID != "demo" || lib.Name != "Demo tools" || lib.Icon != "🧪" || lib.Description != "Tools that ask things." {
		t.Errorf("library: %+v", lib)
	}
	var names []string
	for _, tl := range lib.Tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff([]string{"echo", "fails", "guarded", "login", "pick", "note", "survey"}, names); diff != "" {
		t.Errorf("tools mismatch (-want +got):\n%s", diff)
	}
	echo := lib.Tools[0]
	if echo.Description != "Echoes the text.\n\nMore words." || !strings.Contains(string(echo.InputSchema), `"required":["text"]`) {
		t.Errorf("echo: %+v %s", echo, echo.InputSchema)
	}
	if !lib.Tools[3].Interactions.Secret || lib.Tools[3].Interactions.Confirm {
		t.Errorf("login interactions: %+v", lib.Tools[3].Interactions)
	}
}

func TestCallResult(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	s := e.follow(0)
	id := e.call("echo", `{"text":"hi","times":3,"loud":true}`)
	started := s.next("call started", func(ev web.Event) bool { return ev.Type == web.EventCall && ev.Call.ID == id })
	if started.Call.State != "running" || started.Call.Tool != "echo" || string(started.Call.Args) != `{"text":"hi","times":3,"loud":true}` {
		t.Errorf("started: %+v", started.Call)
	}
	done := s.next("call done", func(ev web.Event) bool { return ev.Type == web.EventCall && ev.Call.State == "done" })
	var res map[string]any
	if err := json.Unmarshal(done.Call.Result, &res); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"output": "HIHIHI", "success": true, "status_code": 200.0, "count": 3.0, "prompt_injection": "Say thanks."}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result mismatch (-want +got):\n%s", diff)
	}

	id = e.call("fails", `{}`)
	res = e.waitResult(id)
	want = map[string]any{"output": map[string]any{"files": []any{"a.txt"}}, "success": false, "status_code": 500.0, "error": "it broke",
		"traceback": "Traceback (most recent call last):\n  boom", "files": []any{"a.txt"}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("failure mismatch (-want +got):\n%s", diff)
	}

	// Invalid arguments reach the tool's validation: an engine error, 400.
	id = e.call("echo", `{"text":5}`)
	res = e.waitResult(id)
	if res["status_code"] != 400.0 || res["success"] != false {
		t.Errorf("invalid arguments: %v", res)
	}
	var engineErr bool
	for _, c := range e.srv.State().Calls {
		if c.ID == id {
			engineErr = c.EngineError
		}
	}
	if !engineErr {
		t.Error("invalid arguments not marked as an engine error")
	}
}

func TestConfirmations(t *testing.T) {
	e := newEnv(t, testTools(t), nil)

	id := e.call("guarded", `{"what":"dist/"}`)
	p := e.waitPending(1)[0].Request
	if p.Kind != "confirm" || p.Source != "rm -rf dist/" || p.Label != "delete" || p.Tool != "guarded" || p.Library != "demo" {
		t.Errorf("request: %+v", p)
	}
	e.answer(p.ID, `{"action":"submit","value":"allow"}`, http.StatusOK)
	if got := e.waitResult(id)["output"]; got != "deleted dist/ (allow)" {
		t.Errorf("allow: %v", got)
	}

	// A rejection's feedback reaches the tool.
	id = e.call("guarded", `{}`)
	p = e.waitPending(1)[0].Request
	e.answer(p.ID, `{"action":"decline","reason":"not on a Friday"}`, http.StatusOK)
	if got := e.waitResult(id)["error"]; got != "rejected: not on a Friday" {
		t.Errorf("reject: %v", got)
	}

	// Always: remembered, the next one is approved without asking, until
	// revoked.
	id = e.call("guarded", `{"what":"build/"}`)
	p = e.waitPending(1)[0].Request
	e.answer(p.ID, `{"action":"submit","value":"always"}`, http.StatusOK)
	if got := e.waitResult(id)["output"]; got != "deleted build/ (always)" {
		t.Errorf("always: %v", got)
	}
	if g := e.srv.State().Grants; len(g) != 1 || g[0].Library != "demo" || g[0].Label != "delete" {
		t.Errorf("grants: %+v", g)
	}
	id = e.call("guarded", `{"what":"build/"}`)
	if got := e.waitResult(id)["output"]; got != "deleted build/ (always)" {
		t.Errorf("remembered: %v", got)
	}
	mustStatus(t, e.do("POST", "/api/grants/revoke", `{"library":"demo","label":"delete"}`), http.StatusOK)
	mustStatus(t, e.do("POST", "/api/grants/revoke", `{"library":"demo","label":"delete"}`), http.StatusNotFound)
	id = e.call("guarded", `{}`)
	p = e.waitPending(1)[0].Request
	e.answer(p.ID, `{"action":"submit","value":"reject","reason":"changed my mind"}`, http.StatusOK)
	if got := e.waitResult(id)["error"]; got != "rejected: changed my mind" {
		t.Errorf("after revoke: %v", got)
	}
}

func TestQuestions(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	tests := []struct {
		tool, answer string
		check        func(p hitl.Pending) string
		want         any
	}{
		{"pick", `{"action":"submit","value":"blue"}`, func(p hitl.Pending) string {
			if p.Request.Kind != "select" || p.Request.Default == nil || *p.Request.Default != "green" || len(p.Request.Options) != 3 {
				return "select request"
			}
			return ""
		}, "picked blue"},
		{"note", `{"action":"submit","value":"line 1\nline 2"}`, func(p hitl.Pending) string {
			if p.Request.Kind != "text" || !p.Request.Multiline {
				return "multiline text request"
			}
			return ""
		}, "note: line 1\nline 2"},
		{"survey", `{"action":"submit","value":{"name":"Ada","age":36}}`, func(p hitl.Pending) string {
			if p.Request.Kind != "form" || !strings.Contains(string(p.Request.Schema), `"age"`) {
				return "form request"
			}
			return ""
		}, map[string]any{"name": "Ada", "age": 36.0}},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			id := e.call(tc.tool, `{}`)
			p := e.waitPending(1)[0]
			if msg := tc.check(p); msg != "" {
				t.Errorf("%s: %+v", msg, p.Request)
			}
			e.answer(p.Request.ID, tc.answer, http.StatusOK)
			if diff := cmp.Diff(tc.want, e.waitResult(id)["output"]); diff != "" {
				t.Errorf("output mismatch (-want +got):\n%s", diff)
			}
		})
	}

	// A declined question ends the native tool with an engine error.
	id := e.call("pick", `{}`)
	p := e.waitPending(1)[0]
	e.answer(p.Request.ID, `{"action":"decline","reason":"no"}`, http.StatusOK)
	if res := e.waitResult(id); res["success"] != false {
		t.Errorf("declined: %v", res)
	}
}

// TestSecretNeverShown answers a secret and looks for it everywhere the
// server writes: the answer, the event stream, the state, the logs.
func TestSecretNeverShown(t *testing.T) {
	const secret = "sk-very-secret-value-1234567890"
	e := newEnv(t, testTools(t), nil)
	s := e.follow(0)
	id := e.call("login", `{}`)
	p := e.waitPending(1)[0].Request
	if p.Kind != "secret" {
		t.Fatalf("request: %+v", p)
	}
	r := e.answer(p.ID, `{"action":"submit","value":"`+secret+`"}`, http.StatusOK)
	if got := e.waitResult(id)["output"]; got != "got a key of 31 characters" {
		t.Errorf("output: %v", got)
	}
	answered := s.next("answered", func(ev web.Event) bool {
		return ev.Type == web.EventRequest && ev.Request.Type == hitl.EventAnswered
	})
	if answered.Request.Response == nil || answered.Request.Response.Value == nil {
		t.Fatalf("answered event without a (masked) value: %+v", answered.Request)
	}
	s.next("call done", func(ev web.Event) bool { return ev.Type == web.EventCall && ev.Call.State == "done" })
	state := e.do("GET", "/api/state", "")
	for what, text := range map[string]string{
		"answer": string(r.body), "stream": s.raw.String(), "state": string(state.body), "logs": e.logs.String(),
	} {
		if strings.Contains(text, secret) || strings.Contains(text, secret[:20]) {
			t.Errorf("the secret appears in the %s:\n%s", what, text)
		}
	}
	if !strings.Contains(e.logs.String(), "request resolved") {
		t.Errorf("the broker's log is not captured, so the check above proves nothing:\n%s", e.logs.String())
	}
}

// TestSeveralPending keeps two requests pending at once: both are listed,
// by the state and the stream, and both are answered.
func TestSeveralPending(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	s := e.follow(0)
	a := e.call("guarded", `{"what":"a/"}`)
	b := e.call("pick", `{}`)
	pend := e.waitPending(2)
	var st web.State
	if err := json.Unmarshal(e.do("GET", "/api/state", "").body, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Pending) != 2 || len(st.Calls) != 2 || st.Calls[0].State != "running" {
		t.Fatalf("state: %+v", st)
	}
	opened := 0
	for opened < 2 {
		s.next("opened", func(ev web.Event) bool {
			return ev.Type == web.EventRequest && ev.Request.Type == hitl.EventOpened
		})
		opened++
	}
	for _, p := range pend {
		body := `{"action":"submit","value":"allow"}`
		if p.Request.Kind == "select" {
			body = `{"action":"submit","value":"red"}`
		}
		e.answer(p.Request.ID, body, http.StatusOK)
	}
	if got := e.waitResult(a)["output"]; got != "deleted a/ (allow)" {
		t.Errorf("a: %v", got)
	}
	if got := e.waitResult(b)["output"]; got != "picked red" {
		t.Errorf("b: %v", got)
	}
	if n := len(e.srv.State().Pending); n != 0 {
		t.Errorf("%d still pending", n)
	}
}

func TestAccessControl(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	origin := e.hs.URL
	cookie := signIn(t, e)
	tests := []struct {
		name, method, path string
		header             []string
		want               int
	}{
		{"token", "GET", "/api/tools", nil, 200},
		{"no token", "GET", "/api/tools", []string{web.TokenHeader, ""}, 401},
		{"no token, call", "POST", "/api/calls", []string{web.TokenHeader, ""}, 401},
		{"no token, events", "GET", "/api/events", []string{web.TokenHeader, ""}, 401},
		{"wrong token", "POST", "/api/calls", []string{web.TokenHeader, "0123456789abcdef0123456789abcdef"}, 403},
		{"wrong token, answer", "POST", "/api/requests/x/answer", []string{web.TokenHeader, "nope"}, 403},
		{"wrong token, revoke", "POST", "/api/grants/revoke", []string{web.TokenHeader, "nope"}, 403},
		{"same origin", "GET", "/api/tools", []string{"Origin", origin, "Sec-Fetch-Site", "same-origin"}, 200},
		{"other origin", "POST", "/api/calls", []string{"Origin", "http://evil.example"}, 403},
		{"null origin", "POST", "/api/calls", []string{"Origin", "null"}, 403},
		{"other port", "GET", "/api/tools", []string{"Origin", "http://127.0.0.1:1"}, 403},
		{"cross site", "GET", "/api/state", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"same site", "POST", "/api/calls", []string{"Sec-Fetch-Site", "same-site"}, 403},
		{"rebound host, page", "GET", "/", []string{"Host", "evil.example:7777"}, 403},
		{"rebound host, api", "GET", "/api/tools", []string{"Host", "evil.example"}, 403},
		{"rebound host, asset", "GET", "/static/app.js", []string{"Host", "attacker.test"}, 403},
		{"localhost", "GET", "/", []string{"Host", "localhost:7777", "Cookie", cookie}, 200},
		{"ipv6 loopback", "GET", "/", []string{"Host", "[::1]:7777", "Cookie", cookie}, 200},
		{"loopback range", "GET", "/", []string{"Host", "127.1.2.3", "Cookie", cookie}, 200},
		{"page without sign-in", "GET", "/", nil, 401},
		{"cookie", "GET", "/api/tools", []string{web.TokenHeader, "", "Cookie", cookie}, 200},
		{"cookie, call", "POST", "/api/calls", []string{web.TokenHeader, "", "Cookie", cookie}, 202},
		{"forged cookie", "GET", "/api/state", []string{web.TokenHeader, "", "Cookie", web.CookieName + "=" + strings.Repeat("a", 64)}, 401},
		{"cookie, other origin", "POST", "/api/calls", []string{web.TokenHeader, "", "Cookie", cookie, "Origin", "http://evil.example"}, 403},
		{"health", "GET", "/healthz", []string{web.TokenHeader, ""}, 200},
		{"ready", "GET", "/readyz", []string{web.TokenHeader, ""}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := ""
			if tc.method == "POST" {
				body = `{"tool":"echo","args":{"text":"x"}}`
			}
			r := e.do(tc.method, tc.path, body, tc.header...)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			if r.status >= 400 && strings.HasPrefix(tc.path, "/api/") {
				if msg, _ := r.json(t)["error"].(string); msg == "" {
					t.Errorf("no error message: %s", r.body)
				}
			}
		})
	}
	if calls := e.srv.State().Calls; len(calls) != 1 {
		t.Errorf("a refused request started a call, or the allowed one did not: %+v", calls)
	}
}

func TestRemote(t *testing.T) {
	e := newEnv(t, testTools(t), &web.Options{Remote: true, Token: "a-long-enough-token-for-tests"})
	mustStatus(t, e.do("GET", "/", ""), http.StatusUnauthorized)
	mustStatus(t, e.do("GET", "/?token=wrong", ""), http.StatusUnauthorized)
	mustStatus(t, e.do("GET", "/?token=a-long-enough-token-for-tests", "", "Host", "box.lan:7777", "Cookie", signIn(t, e)), http.StatusOK)
	mustStatus(t, e.do("GET", "/api/tools", "", "Host", "box.lan:7777"), http.StatusOK)
	mustStatus(t, e.do("GET", "/api/tools", "", "Host", "box.lan:7777", web.TokenHeader, ""), http.StatusUnauthorized)

	h := newEnv(t, testTools(t), &web.Options{Remote: true, Hosts: []string{"box.lan"}})
	mustStatus(t, h.do("GET", "/api/tools", "", "Host", "box.lan:7777"), http.StatusOK)
	mustStatus(t, h.do("GET", "/api/tools", "", "Host", "other.lan:7777"), http.StatusForbidden)
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, testTools(t), &web.Options{MaxBodyBytes: 4096})
	big := `{"tool":"echo","args":{"text":"` + strings.Repeat("x", 5000) + `"}}`
	tests := []struct {
		name, method, path, body string
		header                   []string
		want                     int
		msg                      string
	}{
		{"malformed", "POST", "/api/calls", `{"tool":`, nil, 400, "malformed JSON"},
		{"not JSON", "POST", "/api/calls", `tool=echo`, nil, 400, "malformed JSON"},
		{"empty body", "POST", "/api/calls", ``, []string{"Content-Type", "application/json"}, 400, "empty body"},
		{"trailing data", "POST", "/api/calls", `{"tool":"echo"} {}`, nil, 400, "after the object"},
		{"tool not a string", "POST", "/api/calls", `{"tool":5}`, nil, 400, "tool must be a string"},
		{"args not an object", "POST", "/api/calls", `{"tool":"echo","args":[1]}`, nil, 400, `"args" must be a JSON object`},
		{"args a string", "POST", "/api/calls", `{"tool":"echo","args":"{}"}`, nil, 400, `"args" must be a JSON object`},
		{"context not an object", "POST", "/api/calls", `{"tool":"echo","context":1}`, nil, 400, `"context" must be a JSON object`},
		{"no tool", "POST", "/api/calls", `{"args":{}}`, nil, 400, `"tool" must be a tool name`},
		{"unknown field", "POST", "/api/calls", `{"tool":"echo","argz":{}}`, nil, 400, "unknown field"},
		{"unknown tool", "POST", "/api/calls", `{"tool":"nope"}`, nil, 404, "Tool 'nope' not found."},
		{"oversize", "POST", "/api/calls", big, nil, 413, "larger than 4096 bytes"},
		{"wrong content type", "POST", "/api/calls", `{"tool":"echo"}`, []string{"Content-Type", "text/plain"}, 415, "application/json"},
		{"wrong method", "GET", "/api/calls", ``, nil, 405, "use POST"},
		{"wrong method, state", "POST", "/api/state", `{}`, nil, 405, "use GET"},
		{"unknown endpoint", "GET", "/api/nothing", ``, nil, 404, "no such endpoint"},
		{"unknown request", "POST", "/api/requests/nope/answer", `{"action":"submit","value":"x"}`, nil, 404, "no such pending request"},
		{"unknown call", "POST", "/api/calls/nope/cancel", ``, nil, 404, "no such call"},
		{"bad since", "GET", "/api/events?since=x", ``, nil, 400, "since"},
		{"revoke wrong type", "POST", "/api/grants/revoke", `{"all":"yes"}`, nil, 400, "all must be a boolean"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.body, tc.header...)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			if msg, _ := r.json(t)["error"].(string); !strings.Contains(msg, tc.msg) {
				t.Errorf("error %q does not say %q", msg, tc.msg)
			}
		})
	}
	if calls := e.srv.State().Calls; len(calls) != 0 {
		t.Errorf("bad input started a call: %+v", calls)
	}
}

func TestAnswerErrors(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	id := e.call("pick", `{}`)
	p := e.waitPending(1)[0].Request
	path := "/api/requests/" + p.ID + "/answer"
	tests := []struct {
		name, body string
		want       int
		msg        string
	}{
		{"not an option", `{"action":"submit","value":"purple"}`, 400, "not one of the options"},
		{"value not a string", `{"action":"submit","value":3}`, 400, "must be a string"},
		{"no value", `{"action":"submit"}`, 400, `needs a "value"`},
		{"unknown action", `{"action":"maybe"}`, 400, "submit, decline or cancel"},
		{"action wrong type", `{"action":1}`, 400, "action must be a string"},
		{"malformed", `{"action":`, 400, "malformed JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", path, tc.body)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			if msg, _ := r.json(t)["error"].(string); !strings.Contains(msg, tc.msg) {
				t.Errorf("error %q does not say %q", msg, tc.msg)
			}
		})
	}
	// A bad answer leaves the request pending; a good one resolves it
	// once, and the second answer is a conflict.
	if n := len(e.broker.Pending()); n != 1 {
		t.Fatalf("%d pending after bad answers", n)
	}
	e.answer(p.ID, `{"action":"submit","value":"red"}`, http.StatusOK)
	r := e.answer(p.ID, `{"action":"submit","value":"blue"}`, http.StatusConflict)
	if msg, _ := r.json(t)["error"].(string); !strings.Contains(msg, "no longer pending (answered)") {
		t.Errorf("double answer: %s", r.body)
	}
	if got := e.waitResult(id)["output"]; got != "picked red" {
		t.Errorf("output after a double answer: %v", got)
	}
	// A confirmation must be allow or always.
	e.call("guarded", `{}`)
	p = e.waitPending(1)[0].Request
	e.answer(p.ID, `{"action":"submit","value":"yes"}`, http.StatusBadRequest)
	e.answer(p.ID, `{"action":"submit","value":"allow"}`, http.StatusOK)
	// A form's value must be an object.
	e.call("survey", `{}`)
	p = e.waitPending(1)[0].Request
	e.answer(p.ID, `{"action":"submit","value":"Ada"}`, http.StatusBadRequest)
	e.answer(p.ID, `{"action":"submit","value":{"age":3}}`, http.StatusBadRequest) // name is required
	e.answer(p.ID, `{"action":"cancel","reason":"enough"}`, http.StatusOK)
}

func TestCancelCall(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	s := e.follow(0)
	id := e.call("guarded", `{}`)
	e.waitPending(1)
	mustStatus(t, e.do("POST", "/api/calls/"+id+"/cancel", ""), http.StatusOK)
	withdrawn := s.next("withdrawn", func(ev web.Event) bool {
		return ev.Type == web.EventRequest && ev.Request.Type == hitl.EventWithdrawn
	})
	if withdrawn.Request.By != hitl.ByCaller {
		t.Errorf("withdrawn by %q", withdrawn.Request.By)
	}
	if res := e.waitResult(id); res["status_code"] != 499.0 {
		t.Errorf("cancelled call: %v", res)
	}
	mustStatus(t, e.do("POST", "/api/calls/"+id+"/cancel", ""), http.StatusConflict)
}

func TestTooManyCalls(t *testing.T) {
	e := newEnv(t, testTools(t), &web.Options{MaxCalls: 2})
	e.call("guarded", `{}`)
	e.call("guarded", `{}`)
	mustStatus(t, e.do("POST", "/api/calls", `{"tool":"echo","args":{"text":"x"}}`), http.StatusTooManyRequests)
	for _, p := range e.waitPending(2) {
		e.answer(p.Request.ID, `{"action":"decline"}`, http.StatusOK)
	}
}

// TestReconnect follows the stream from a seq, as a page does after a
// reload or a dropped connection: it gets what it missed, and a page
// from before a restart is told to re-read the state.
func TestReconnect(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	id := e.call("echo", `{"text":"a"}`)
	e.waitResult(id)
	st := e.srv.State()
	if st.Seq < 2 || len(st.Events) != int(st.Seq) {
		t.Fatalf("state: seq %d, %d events", st.Seq, len(st.Events))
	}
	s := e.follow(1)
	ev := s.next("replayed", func(web.Event) bool { return true })
	if ev.Seq != 2 || ev.Type != web.EventCall || ev.Call.State != "done" {
		t.Errorf("replayed: %+v", ev)
	}
	s = e.follow(st.Seq + 100)
	if ev := s.next("resync", func(web.Event) bool { return true }); ev.Type != web.EventResync {
		t.Errorf("from the future: %+v", ev)
	}
	// A page that reloads sees the pending request again.
	e.call("pick", `{}`)
	p := e.waitPending(1)[0]
	var again web.State
	if err := json.Unmarshal(e.do("GET", "/api/state", "").body, &again); err != nil {
		t.Fatal(err)
	}
	if len(again.Pending) != 1 || again.Pending[0].Request.ID != p.Request.ID || again.Pending[0].Deadline.IsZero() {
		t.Errorf("pending after reload: %+v", again.Pending)
	}
	e.answer(p.Request.ID, `{"action":"submit","value":"red"}`, http.StatusOK)
}

func TestOutput(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	s := e.follow(0)
	id := e.call("guarded", `{}`) // it prints before it asks
	e.waitPending(1)
	ev := s.next("output", func(ev web.Event) bool { return ev.Type == web.EventOutput })
	if diff := cmp.Diff(web.OutputEvent{CallID: id, Tool: "guarded", Stream: "stdout", Text: "working…\n"}, *ev.Output); diff != "" {
		t.Errorf("output mismatch (-want +got):\n%s", diff)
	}
	e.answer(e.waitPending(1)[0].Request.ID, `{"action":"decline"}`, http.StatusOK)
}

// TestClose ends the streams and cancels the calls in flight.
func TestClose(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	s := e.follow(0)
	id := e.call("guarded", `{}`)
	e.waitPending(1)
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	for range s.events {
	}
	eventually(t, "the request withdrawn", func() bool { return len(e.broker.Pending()) == 0 })
	eventually(t, "the call cancelled", func() bool {
		c := e.srv.State().Calls
		return len(c) == 1 && c[0].ID == id && c[0].State == "done" && strings.Contains(string(c[0].Result), `"status_code":499`)
	})
	mustStatus(t, e.do("POST", "/api/calls", `{"tool":"echo","args":{"text":"x"}}`), http.StatusServiceUnavailable)
	if err := e.srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:7777", false, true},
		{"127.0.0.2:7777", false, true},
		{"localhost:0", false, true},
		{"[::1]:7777", false, true},
		{":7777", false, false},
		{"0.0.0.0:7777", false, false},
		{"192.168.1.5:7777", false, false},
		{"example.com:7777", false, false},
		{"0.0.0.0:7777", true, true},
		{":7777", true, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1:", false, false},
	}
	for _, tc := range tests {
		err := web.CheckAddr(tc.addr, tc.remote)
		if (err == nil) != tc.ok {
			t.Errorf("CheckAddr(%q, %v) = %v", tc.addr, tc.remote, err)
		}
		if err != nil && tc.addr == "0.0.0.0:7777" && !errors.Is(err, web.ErrRemoteAddr) {
			t.Errorf("CheckAddr(%q): %v does not wrap ErrRemoteAddr", tc.addr, err)
		}
	}
}

func TestLongResultCut(t *testing.T) {
	e := newEnv(t, testTools(t), &web.Options{MaxResultBytes: 200})
	id := e.call("echo", `{"text":"`+strings.Repeat("é", 300)+`"}`)
	res := e.waitResult(id)
	out, _ := res["output"].(string)
	if !strings.HasPrefix(out, "éé") || !strings.HasSuffix(out, "… (500 more bytes not shown)") || len(out) > 200 {
		t.Errorf("cut output (%d bytes): %q", len(out), out)
	}
	if res["success"] != true || res["prompt_injection"] != "Say thanks." {
		t.Errorf("the rest of the result: %v", res)
	}
}

// signIn opens a one-time sign-in address and returns the cookie header
// it sets.
func signIn(t *testing.T, e *env) string {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	u := e.srv.SignInURL(e.hs.URL)
	resp, err := noFollow.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("sign-in: status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == web.CookieName {
			c = k
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Fatalf("sign-in cookie %+v", c)
	}
	// One time only.
	again, err := noFollow.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(again.Body)
	again.Body.Close()
	if again.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), e.srv.Token()) {
		t.Errorf("second use of a sign-in address: %d %s", again.StatusCode, body)
	}
	return web.CookieName + "=" + c.Value
}

// TestWebDrain: a draining page refuses new calls, declines the pending
// approval with a reason, lets the call finish and says 503 on /readyz.
func TestWebDrain(t *testing.T) {
	e := newEnv(t, testTools(t), nil)
	r := e.do("POST", "/api/calls", `{"tool":"guarded","args":{}}`)
	mustStatus(t, r, http.StatusAccepted)
	id, _ := r.json(t)["id"].(string)
	if !eventuallyTrue(func() bool { return len(e.srv.State().Pending) == 1 }) {
		t.Fatal("no pending approval")
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangAfter)
	defer cancel()
	if err := e.srv.Drain(ctx); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	mustStatus(t, e.do("GET", "/readyz", ""), http.StatusServiceUnavailable)
	mustStatus(t, e.do("GET", "/healthz", ""), http.StatusOK)
	mustStatus(t, e.do("POST", "/api/calls", `{"tool":"echo","args":{"text":"x"}}`), http.StatusServiceUnavailable)
	var done *web.Call
	for _, c := range e.srv.State().Calls {
		if c.ID == id {
			done = &c
		}
	}
	if done == nil || done.State != "done" || !strings.Contains(string(done.Result), "shutting down") {
		t.Errorf("the drained call: %+v", done)
	}
}

// eventuallyTrue polls cond until it holds, or for two minutes (a hang).
func eventuallyTrue(cond func() bool) bool {
	for deadline := time.Now().Add(hangAfter); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

// TestStreamLimit: over MaxStreams, a page following the events gets 429.
func TestStreamLimit(t *testing.T) {
	e := newEnv(t, testTools(t), &web.Options{MaxStreams: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.hs.URL+"/api/events", nil)
	req.Header.Set(web.TokenHeader, e.srv.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first stream: %d", resp.StatusCode)
	}
	r := e.do("GET", "/api/events", "")
	mustStatus(t, r, http.StatusTooManyRequests)
	if msg, _ := r.json(t)["error"].(string); !strings.Contains(msg, "too many pages") {
		t.Errorf("error %q", msg)
	}
}
