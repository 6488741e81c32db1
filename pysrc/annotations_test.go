package pysrc

import (
	"fmt"
	"strings"
	"testing"
)

// annotated formats a tool's annotations as one line, for tables.
func annotated(a *Annotations) string {
	if a == nil {
		return "-"
	}
	var parts []string
	if a.Title != "" {
		parts = append(parts, fmt.Sprintf("title=%q", a.Title))
	}
	for _, h := range []struct {
		name string
		v    *bool
	}{{"ro", a.ReadOnly}, {"destr", a.Destructive}, {"idem", a.Idempotent}, {"open", a.OpenWorld}} {
		if h.v != nil {
			parts = append(parts, fmt.Sprintf("%s=%v", h.name, *h.v))
		}
	}
	return strings.Join(parts, " ")
}

const twoTools = `
def tool_read(p: str):
    """Reads."""

def tool_wipe():
    """Wipes."""
`

func TestAnnotations(t *testing.T) {
	for _, tt := range []struct {
		name  string
		src   string
		read  string // tool_read's annotations
		wipe  string // tool_wipe's
		diags []string
	}{
		{"none", twoTools, "-", "-", nil},
		{"both tools", `TOOL_ANNOTATIONS = {
    "tool_read": {"title": "Read a file", "readOnlyHint": True, "openWorldHint": False},
    "tool_wipe": {"destructiveHint": True, "idempotentHint": True, "readOnlyHint": False},
}` + twoTools, `title="Read a file" ro=true open=false`, "ro=false destr=true idem=true", nil},
		{"annotated assignment, implicit concatenation", `TOOL_ANNOTATIONS: dict = {"tool_read": {"title": "Read " "it"}}` + twoTools,
			`title="Read it"`, "-", nil},
		{"the last assignment wins, as in Python", `TOOL_ANNOTATIONS = {"tool_read": {"readOnlyHint": True}}
TOOL_ANNOTATIONS = {"tool_wipe": {"destructiveHint": True}}` + twoTools, "-", "destr=true", nil},
		{"declared after the tools", twoTools + `TOOL_ANNOTATIONS = {"tool_wipe": {"destructiveHint": True}}`, "-", "destr=true", nil},
		{"not a dict", `TOOL_ANNOTATIONS = dict(tool_read={"readOnlyHint": True})` + twoTools, "-", "-",
			[]string{`1: TOOL_ANNOTATIONS: must be a dict literal {"tool_name": {"readOnlyHint": True, ...}}; it is ignored`}},
		{"an unknown tool", `TOOL_ANNOTATIONS = {"tool_raed": {"readOnlyHint": True}, "tool_wipe": {"destructiveHint": True}}` + twoTools, "-", "destr=true",
			[]string{`1: TOOL_ANNOTATIONS: "tool_raed" is not a tool of this file`}},
		{"bad hints are left out, good ones kept", `TOOL_ANNOTATIONS = {
    "tool_read": {"readonlyHint": True, "openWorldHint": "no", "title": f"x", "idempotentHint": True},
    "tool_wipe": {"read_only": True, 1: True, "destructiveHint": 1},
}` + twoTools, "idem=true", "-", []string{
			`2: TOOL_ANNOTATIONS: the entry of tool_read: unknown hint "readonlyHint" (did you mean readOnlyHint?); the hints are title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint`,
			`2: TOOL_ANNOTATIONS: the openWorldHint of tool_read must be True or False`,
			`2: TOOL_ANNOTATIONS: the title of tool_read must be a string literal`,
			`3: TOOL_ANNOTATIONS: the entry of tool_wipe: unknown hint "read_only" (did you mean readOnlyHint?); the hints are title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint`,
			`3: TOOL_ANNOTATIONS: the entry of tool_wipe: a hint's name must be a string literal`,
			`3: TOOL_ANNOTATIONS: the destructiveHint of tool_wipe must be True or False`,
		}},
		{"entries that are not literals", `HINTS = {"readOnlyHint": True}
TOOL_ANNOTATIONS = {"tool_read": HINTS, **OTHER, TOOL: {}}` + twoTools, "-", "-", []string{
			`2: TOOL_ANNOTATIONS: the entry of tool_read must be a dict literal of hints (title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint)`,
			`2: TOOL_ANNOTATIONS: ** unpacking cannot be read without running the module; write the entries out`,
			`2: TOOL_ANNOTATIONS: a key must be a tool name as a string literal`,
		}},
		{"an empty entry declares nothing", `TOOL_ANNOTATIONS = {"tool_read": {}}` + twoTools, "-", "-", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ReadFile("lib.py", []byte(tt.src))
			if err != nil || f.SyntaxErrors != nil {
				t.Fatalf("%v %v", err, f.SyntaxErrors)
			}
			if got := annotated(f.Tools[0].Annotations); got != tt.read {
				t.Errorf("tool_read: %s, want %s", got, tt.read)
			}
			if got := annotated(f.Tools[1].Annotations); got != tt.wipe {
				t.Errorf("tool_wipe: %s, want %s", got, tt.wipe)
			}
			var diags []string
			for _, d := range f.Diagnostics() {
				if d.Kind == DiagBadAnnotations {
					diags = append(diags, fmt.Sprintf("%d: %s", d.Line, d.Message))
				}
			}
			if strings.Join(diags, "\n") != strings.Join(tt.diags, "\n") {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(diags, "\n"), strings.Join(tt.diags, "\n"))
			}
		})
	}
}
