package pysrc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestAsks(t *testing.T) {
	all := Asks{Confirm: true, Text: true, Secret: true, Select: true}
	questions := Asks{Text: true, Secret: true, Select: true}
	tests := []struct {
		name string
		src  string
		want map[string]Asks
	}{
		{"plain tools ask nothing", `
def tool_add(a: int, b: int):
    return a + b
`, map[string]Asks{"tool_add": {}}},
		{"the parameter, a text question", `
def tool_greet(name: str, user_interaction_handler=None):
    title = user_interaction_handler({"type": "text", "title": "Title", "prompt": "Which title?"})
    return title + name

def tool_quiet():
    return 1
`, map[string]Asks{"tool_greet": {Text: true}, "tool_quiet": {}}},
		{"the parameter, no dict seen: every kind", `
def tool_ask(q, user_interaction_handler=None):
    return user_interaction_handler(q)
`, map[string]Asks{"tool_ask": questions}},
		{"a dict without a type is text", `
def tool_note(user_interaction_handler=None):
    return user_interaction_handler({"prompt": "A note?"})
`, map[string]Asks{"tool_note": {Text: true}}},
		{"module hooks and a helper", `
_CONFIRM_HANDLER = None
_USER_INTERACTION_HANDLER = None

def set_confirm_handler(h):
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = h

def _approve(what):
    return _CONFIRM_HANDLER(what, "label")

def _secret(title):
    return _USER_INTERACTION_HANDLER({"type": "secret", "title": title})

def tool_delete(path: str):
    decision, reason = _approve("rm " + path)
    return decision

def tool_login():
    return _secret("API key")

def tool_both():
    _approve("x")
    _secret("y")
    return {"type": "object", "title": "not a question"}

def tool_none():
    return "nothing"
`, map[string]Asks{"tool_delete": {Confirm: true}, "tool_login": {Secret: true}, "tool_both": {Confirm: true, Secret: true}, "tool_none": {}}},
		{"the config key", `
def init_tools_library(config):
    global H
    H = config.get("confirm_handler")

def tool_x(config: dict = None):
    return config["confirm_handler"]("s", "l")
`, map[string]Asks{"tool_x": {Confirm: true}}},
		{"a computed kind is any kind", `
def tool_q(kind: str, user_interaction_handler=None):
    return user_interaction_handler({"type": kind, "prompt": "?"})
`, map[string]Asks{"tool_q": questions}},
		{"calling the host's tools asks what they ask", `
def tool_run(cmd: str, lollms_client_instance=None):
    return lollms_client_instance.tools.execute_tool("system_shell", {"command": cmd})
`, map[string]Asks{"tool_run": all}},
		{"recursion ends", `
def _a(n):
    return _b(n)

def _b(n):
    return _a(n) or _CONFIRM_HANDLER("x", "y")

def tool_loop(n: int):
    return _a(n)
`, map[string]Asks{"tool_loop": {Confirm: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ReadFile("lib.py", []byte(tt.src))
			if err != nil || f.SyntaxErrors != nil {
				t.Fatalf("%v %v", err, f.SyntaxErrors)
			}
			if len(f.Tools) != len(tt.want) {
				t.Fatalf("%d tools, want %d", len(f.Tools), len(tt.want))
			}
			for _, tl := range f.Tools {
				if got := tl.Asks; got != tt.want[tl.Name] {
					t.Errorf("%s asks %+v, want %+v", tl.Name, got, tt.want[tl.Name])
				}
			}
		})
	}
}

// TestAsksOfTheBuiltInLibrary reads the seeds' example libraries.
func TestAsksOfTheBuiltInLibrary(t *testing.T) {
	want := map[string]Asks{
		"tool_prepare_deployment":           {Confirm: true, Text: true, Secret: true, Select: true},
		"tool_configure_service_connection": {Text: true, Secret: true, Select: true},
		"tool_test_service_connection":      {Confirm: true},
	}
	for _, lib := range []string{"user_interaction_demo", "user_interactive_tools"} {
		path := filepath.Join("..", "builtin", "pylib", "lib", lib, lib+".py")
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ReadFile(path, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range f.Tools {
			if got := tl.Asks; got != want[tl.Name] {
				t.Errorf("%s asks %+v, want %+v", tl.Name, got, want[tl.Name])
			}
		}
	}
}

// mentionsHandlersWords is the definition mentionsHandlers implements: a
// search for each word.
func mentionsHandlersWords(src []byte) bool {
	for _, w := range []string{"onfirm_handler", "ONFIRM_HANDLER", "nteraction_handler", "NTERACTION_HANDLER", "execute_tool"} {
		if bytes.Contains(src, []byte(w)) {
			return true
		}
	}
	return false
}

func TestMentionsHandlers(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"", false},
		{"_", false},
		{"def tool_x(): pass", false},
		{"confirm_handler", true},
		{"Confirm_handler", true},
		{"_CONFIRM_HANDLER = None", true},
		{"Confirm_Handler", false}, // mixed case is not searched
		{"confirm_handle", false},
		{"onfirm_handlers", true},
		{"x.user_interaction_handler(q)", true},
		{"USER_INTERACTION_HANDLER", true},
		{"interaction__handler", false},
		{"execute_tool(", true},
		{"execute_too", false},
		{"_tool execute", false},
		{"___handler handler_ confirm", false},
		{"a_b_c_d confirm_x_handler_ execute_tools", true},
	}
	for _, tt := range tests {
		if got := mentionsHandlers([]byte(tt.src)); got != tt.want {
			t.Errorf("mentionsHandlers(%q) = %v, want %v", tt.src, got, tt.want)
		}
		if got := mentionsHandlersWords([]byte(tt.src)); got != tt.want {
			t.Errorf("the definition on %q = %v, want %v (bad test case)", tt.src, got, tt.want)
		}
	}
}

func FuzzMentionsHandlers(f *testing.F) {
	for _, s := range []string{"confirm_handler", "_CONFIRM_HANDLER", "interaction_handler", "execute_tool", "x_y", "onfirm__handler"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if got, want := mentionsHandlers(src), mentionsHandlersWords(src); got != want {
			t.Errorf("mentionsHandlers(%q) = %v, the word search says %v", src, got, want)
		}
	})
}
