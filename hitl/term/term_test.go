package term_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/hitl/term"
	"github.com/lcptools/lcp/tool"
)

func ptr[T any](v T) *T { return &v }

// screen is an output that tells when it grows.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	grew chan struct{}
}

func newScreen() *screen { return &screen{grew: make(chan struct{}, 1)} }

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.grew <- struct{}{}:
	default:
	}
	return s.buf.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor blocks until the screen shows text.
func (s *screen) waitFor(t *testing.T, text string) {
	t.Helper()
	guard := time.After(20 * time.Second) // against a hang, not a speed check
	for !strings.Contains(s.String(), text) {
		select {
		case <-s.grew:
		case <-guard:
			t.Fatalf("%q never appeared; the screen shows:\n%s", text, s)
		}
	}
}

// piped returns a Terminal reading input from a pipe (not a terminal:
// answers are lines), and the pipe's writing end, open.
func piped(t *testing.T, input string) (*term.Terminal, *screen, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString(input); err != nil {
		t.Fatal(err)
	}
	out := newScreen()
	tm := term.New(r, out)
	t.Cleanup(func() {
		tm.Close()
		r.Close()
		w.Close()
	})
	if tm.IsTerminal() {
		t.Fatal("a pipe is not a terminal")
	}
	return tm, out, w
}

// answer runs one request on a Terminal fed with input (then end of
// input) and returns the response and the screen.
func answer(t *testing.T, r *tool.Request, input string) (tool.Response, string) {
	t.Helper()
	tm, out, w := piped(t, input)
	w.Close()
	if r.ID == "" {
		r.ID = "r1"
	}
	resp, err := tm.Ask(context.Background(), r)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if _, err := r.CheckResponse(resp); err != nil {
		t.Fatalf("the terminal's answer does not fit the request: %v", err)
	}
	return resp, out.String()
}

func TestLines(t *testing.T) {
	confirm := &tool.Request{Kind: tool.KindConfirm, Label: "deploy", Source: "make deploy"}
	sel := &tool.Request{Kind: tool.KindSelect, Title: "Strategy", Options: []string{"blue-green", "rolling", "canary"}, Default: ptr("canary")}
	selNoDef := &tool.Request{Kind: tool.KindSelect, Options: []string{"a", "b"}}
	text := &tool.Request{Kind: tool.KindText, Title: "Tag", Default: ptr("latest")}
	textNoDef := &tool.Request{Kind: tool.KindText, Title: "Name"}
	multi := &tool.Request{Kind: tool.KindText, Title: "Notes", Multiline: true}
	secret := &tool.Request{Kind: tool.KindSecret, Title: "Key"}
	tests := []struct {
		name   string
		req    *tool.Request
		input  string
		action tool.Action
		value  any
		reason string
		shows  string
	}{
		{"y", confirm, "y\n", tool.Submit, tool.Allow, "", "Authorize action? [y]es / [n]o / [a]lways: "},
		{"yes", confirm, "YES\r\n", tool.Submit, tool.Allow, "", "make deploy"},
		{"always", confirm, "a\n", tool.Submit, tool.Always, "", "Approved for the rest of the session"},
		{"no with feedback", confirm, "n\n use staging \n", tool.Decline, nil, "use staging", "Optional feedback"},
		{"no without feedback", confirm, "no\n\n", tool.Decline, nil, term.Declined, ""},
		{"no then end of input", confirm, "n\n", tool.Decline, nil, term.Declined, ""},
		{"unclear, then y", confirm, "maybe\n\ny\n", tool.Submit, tool.Allow, "", "Please answer y"},
		{"end of input", confirm, "", tool.Decline, nil, term.Cancelled, ""},
		{"select by number", sel, "2\n", tool.Submit, "rolling", "", "  3. canary (default)"},
		{"select by text", sel, "blue-green\n", tool.Submit, "blue-green", "", "Choose 1-3 (Enter for 3): "},
		{"select default", sel, "\n", tool.Submit, "canary", "", ""},
		{"select invalid then valid", sel, "9\n0\n1\n", tool.Submit, "blue-green", "", "Invalid selection."},
		{"select without default", selNoDef, "\n2\n", tool.Submit, "b", "", "Choose 1-2: "},
		{"select end of input", sel, "", tool.Decline, nil, term.QuestionCancelled, ""},
		{"text", text, "  v2  \n", tool.Submit, "v2", "", "(Enter for the default: latest)"},
		{"text default", text, "\n", tool.Submit, "latest", "", ""},
		{"text empty without default", textNoDef, "\n", tool.Decline, nil, term.QuestionCancelled, ""},
		{"text end of input", text, "", tool.Decline, nil, term.QuestionCancelled, ""},
		{"multiline", multi, "one\n  two\n.\nignored\n", tool.Submit, "one\n  two", "", ""},
		{"multiline to the end", multi, "one\ntwo", tool.Submit, "one\ntwo", "", ""},
		{"secret", secret, "hunter2-abc\n", tool.Submit, "hunter2-abc", "", "Key"},
		{"secret empty", secret, "\n", tool.Decline, nil, term.QuestionCancelled, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := *tt.req
			resp, out := answer(t, &r, tt.input)
			if resp.Action != tt.action || resp.Value != tt.value || resp.Reason != tt.reason {
				t.Errorf("got %s %v %q, want %s %v %q", resp.Action, resp.Value, resp.Reason, tt.action, tt.value, tt.reason)
			}
			if !strings.Contains(out, tt.shows) {
				t.Errorf("screen lacks %q:\n%s", tt.shows, out)
			}
			if tt.req.Kind == tool.KindSecret && strings.Contains(out, "hunter2") {
				t.Errorf("the secret is on the screen:\n%s", out)
			}
		})
	}
}

func TestForm(t *testing.T) {
	r := &tool.Request{Kind: tool.KindForm, Title: "New user", Validate: true, Schema: json.RawMessage(`{
		"type": "object",
		"properties": {
			"name":  {"type": "string", "title": "Full name"},
			"age":   {"type": "integer", "description": "in years"},
			"admin": {"type": "boolean"},
			"color": {"enum": ["red", "green"], "default": "green"},
			"token": {"type": "string", "format": "password"},
			"note":  {"type": ["string", "null"]},
			"extra": {}
		},
		"required": ["name", "age"]
	}`)}
	resp, out := answer(t, r, "\nAda\nx\n1.5\n36\nmaybe\ny\n\ns3cr3t\n\n[1, 2]\n")
	want := map[string]any{"name": "Ada", "age": json.Number("36"), "admin": true, "color": "green", "token": "s3cr3t", "extra": []any{1.0, 2.0}}
	if diff := cmp.Diff(want, resp.Value); diff != "" {
		t.Errorf("form mismatch (-want +got):\n%s\nscreen:\n%s", diff, out)
	}
	for _, s := range []string{"Full name (required)", "age (required) — in years", "This field is required.", "Not a valid integer.", "Not a valid boolean.", "  2. green (default)"} {
		if !strings.Contains(out, s) {
			t.Errorf("screen lacks %q:\n%s", s, out)
		}
	}
	if r, _ := answer(t, r, "Ada\n"); r.Action != tool.Decline {
		t.Errorf("a form left at the end of the input: %+v, want declined", r)
	}
}

// TestFormChoicesAndDefaults answers the forms of the newest MCP
// revision: defaults for every type (SEP-1034), titled choices and
// several choices (SEP-1330).
func TestFormChoicesAndDefaults(t *testing.T) {
	r := &tool.Request{Kind: tool.KindForm, Title: "Profile", Validate: true, Schema: json.RawMessage(`{
		"type": "object",
		"properties": {
			"name":     {"type": "string", "default": "John Doe"},
			"age":      {"type": "integer", "default": 30},
			"score":    {"type": "number", "default": 95.5},
			"verified": {"type": "boolean", "default": true},
			"titled":   {"type": "string", "oneOf": [{"const": "v1", "title": "First Option"}, {"const": "v2", "title": "Second Option"}]},
			"legacy":   {"type": "string", "enum": ["o1", "o2"], "enumNames": ["Option One", "Option Two"], "default": "o2"},
			"multi":    {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "default": ["c"]},
			"tmulti":   {"type": "array", "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]}, "minItems": 1, "maxItems": 1},
			"optional": {"type": "array", "items": {"type": "string", "enum": ["p", "q"]}}
		},
		"required": ["name", "age", "titled"]
	}`)}
	// Enter for the defaults of name, age, score and verified; the second
	// titled option; Enter for legacy's default; "1,2" for multi; a bad
	// line, then two choices (too many), then one for tmulti; nothing for
	// the optional list.
	resp, out := answer(t, r, "\n\n\n\n2\n\n1, 2\nx\n1,2\n2\n\n")
	want := map[string]any{"name": "John Doe", "age": json.Number("30"), "score": json.Number("95.5"), "verified": true,
		"titled": "v2", "legacy": "o2", "multi": []any{"a", "b"}, "tmulti": []any{"y"}}
	if diff := cmp.Diff(want, resp.Value); diff != "" {
		t.Errorf("form mismatch (-want +got):\n%s\nscreen:\n%s", diff, out)
	}
	for _, s := range []string{"(Enter for the default: John Doe)", "(Enter for the default: 30)", "[y/n] (Enter for the default: yes)",
		"  2. Second Option", "  2. Option Two (default)", "  3. c (default)", "Choose any of 1-3, separated by commas (Enter for 3)",
		"Invalid selection.", "Choose at most 1.", "  2. Why", "(Enter for none)"} {
		if !strings.Contains(out, s) {
			t.Errorf("screen lacks %q:\n%s", s, out)
		}
	}
	// The defaults of a list are taken with Enter; a required field with
	// a default is not asked again.
	resp, _ = answer(t, r, "\n\n\n\n1\n\n\n1\n\n")
	if v := resp.Value.(map[string]any); !cmp.Equal(v["multi"], []any{"c"}) || v["name"] != "John Doe" {
		t.Errorf("defaults: %v", v)
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2J\x1b[H", "a\u202eb", "tab\there", "\x9b31m", "\xff\xfe", "line\nline"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := &tool.Request{ID: "r", Kind: tool.KindConfirm, Label: s, Source: s, Argv: []string{s}}
		_, out := answer(t, r, "y\n")
		for _, c := range out {
			if c != '\n' && (unicode.IsControl(c) || c == '\u202e' || c == '\u2066') {
				t.Fatalf("the screen carries %U from the tool's text %q", c, s)
			}
		}
	})
}

// A request withdrawn while another is shown never appears; one withdrawn
// while shown is closed with a note saying why.
func TestWithdrawn(t *testing.T) {
	tm, out, w := piped(t, "")
	first := make(chan tool.Response, 1)
	go func() {
		resp, _ := tm.Ask(context.Background(), &tool.Request{ID: "a", Kind: tool.KindConfirm, Label: "first"})
		first <- resp
	}()
	out.waitFor(t, "APPROVAL REQUIRED: first")

	ctx, cancel := context.WithCancelCause(context.Background())
	second := make(chan error, 1)
	go func() {
		_, err := tm.Ask(ctx, &tool.Request{ID: "b", Kind: tool.KindConfirm, Label: "second"})
		second <- err
	}()
	cancel(hitl.ErrAnswered)
	if err := <-second; !errors.Is(err, hitl.ErrAnswered) {
		t.Errorf("second Ask: %v, want its context's cause", err)
	}
	if _, err := w.WriteString("y\n"); err != nil {
		t.Fatal(err)
	}
	if r := <-first; r.Value != tool.Allow {
		t.Errorf("first: %+v", r)
	}
	if strings.Contains(out.String(), "second") {
		t.Errorf("a withdrawn request was shown:\n%s", out)
	}

	for _, c := range []struct {
		cause error
		note  string
	}{
		{hitl.ErrTimedOut, "(no answer in time: the request timed out)"},
		{hitl.ErrAnswered, "(answered elsewhere)"},
		{hitl.ErrWithdrawn, "(the request was withdrawn: the call ended)"},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := tm.Ask(ctx, &tool.Request{ID: "c", Kind: tool.KindText, Title: "shown " + c.note})
			done <- err
		}()
		out.waitFor(t, "shown "+c.note)
		cancel(c.cause)
		if err := <-done; !errors.Is(err, c.cause) {
			t.Errorf("Ask: %v, want %v", err, c.cause)
		}
		out.waitFor(t, c.note+"\n")
	}
}

// A terminal that cannot be read never approves anything.
func TestUnreadableTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	r.Close()
	tm := term.New(r, &bytes.Buffer{})
	defer tm.Close()
	b := hitl.New(tm, nil)
	defer b.Close()
	resp := b.Respond(context.Background(), &tool.Request{Kind: tool.KindConfirm, Label: "x"})
	if resp.Action != tool.Decline || !strings.HasPrefix(resp.Reason, "Not approved") {
		t.Errorf("got %+v, want a rejection", resp)
	}
}

// Titled choices show their titles; the answer is the value.
func TestSelectShowsTitles(t *testing.T) {
	r := &tool.Request{Kind: tool.KindSelect, Title: "Hero", Options: []string{"h1", "h2"}, OptionTitles: []string{"Superman", "Batman"}}
	resp, out := answer(t, r, "2\n")
	if resp.Value != "h2" || !strings.Contains(out, "  2. Batman") || strings.Contains(out, "h2") {
		t.Errorf("answer %v, screen:\n%s", resp.Value, out)
	}
	if resp, _ := answer(t, r, "Superman\n"); resp.Value != "h1" {
		t.Errorf("by its title: %v", resp.Value)
	}
}
