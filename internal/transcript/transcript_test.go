package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	s, err := Parse("t.txtar", []byte("Adds.\n-- tools/a.py --\ndef tool_a(): pass\n-- cmd --\nlcp call tool_a\n-- stdout --\nNone\n-- exit --\n0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Comment != "Adds.\n" || len(s.Files) != 1 || s.Files[0].Name != "tools/a.py" {
		t.Errorf("script %+v", s)
	}
	var kinds []string
	for _, st := range s.Steps {
		kinds = append(kinds, st.Kind)
	}
	if diff := cmp.Diff([]string{Cmd, Stdout, Exit}, kinds); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	s.Replace(s.Steps[1], "3")
	if !strings.Contains(string(s.Format()), "-- stdout --\n3\n-- exit --") {
		t.Errorf("replaced:\n%s", s.Format())
	}
}

// The comment's whole-line conditions name the programs a transcript
// needs; brackets inside prose are prose.
func TestParseConditions(t *testing.T) {
	for _, tt := range []struct {
		comment string
		want    []string
	}{
		{"Calls a tool.\n", nil},
		{"[exec:python3]\nCalls a Python tool.\n", []string{"python3"}},
		{"Two.\n  [exec:python3]  \n[exec:node]\n", []string{"python3", "node"}},
		{"Answers [a]lways at the prompt.\n", nil},
	} {
		s, err := Parse("t.txtar", []byte(tt.comment+"-- cmd --\nlcp version\n"))
		if err != nil {
			t.Fatalf("%q: %v", tt.comment, err)
		}
		if diff := cmp.Diff(tt.want, s.Needs); diff != "" {
			t.Errorf("%q: needs mismatch (-want +got):\n%s", tt.comment, diff)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"nothing\n", "no steps"},
		{"-- stdout --\nx\n", "stdout before any cmd"},
		{"-- cmd --\nls -l\n", "it must start with lcp"},
		{"-- cmd --\nlcp call 'x\n", "unclosed '"},
		{"-- cmd --\nlcp version\n-- exit --\nzero\n", `exit "zero" is not a number`},
		{"-- cmd --\nlcp version\n-- a.py --\n", "fixture \"a.py\" after the first step"},
		{"-- ../a.py --\n-- cmd --\nlcp version\n", "inside the work directory"},
		{"-- /etc/a.py --\n-- cmd --\nlcp version\n", "inside the work directory"},
		{"-- send --\n{\"a\":\n", "message 1 is not JSON"},
		{"-- send --\n{}\n-- args --\nlcp mcp\n", "args must be the first step"},
		{"-- cmd --\nlcp version\n-- send --\n{}\n", "send in a CLI transcript"},
		{"-- send --\n{}\n-- cmd --\nlcp version\n", "cmd in an MCP transcript"},
		{"[python3]\n-- cmd --\nlcp version\n", "condition [python3]: the runner knows [exec:PROGRAM]"},
		{"[exec:]\n-- cmd --\nlcp version\n", "condition [exec:]"},
		{"[exec:/usr/bin/python3]\n-- cmd --\nlcp version\n", "condition [exec:/usr/bin/python3]"},
	} {
		_, err := Parse("t.txtar", []byte(tt.text))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.text, err, tt.want)
		}
	}
}

func TestCommandArgs(t *testing.T) {
	env := map[string]string{"WORK": "/w"}
	for _, tt := range []struct {
		line string
		want []string
		err  string
	}{
		{"lcp call --tools $WORK/tools tool_add a=1", []string{"call", "--tools", "/w/tools", "tool_add", "a=1"}, ""},
		{`lcp call x 'text=two words' "q=${WORK} $HOME"`, nil, "unknown variable $HOME"},
		{`lcp call x 'a=$WORK' "b=${WORK}" c\ d ''`, []string{"call", "x", "a=$WORK", "b=/w", "c d", ""}, ""},
		{`lcp call x "it's"`, []string{"call", "x", "it's"}, ""},
		{"lcp", []string{}, ""},
		{"python3 x", nil, "must start with lcp"},
	} {
		got, err := CommandArgs(tt.line, env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v, want %q", tt.line, err, tt.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(tt.want, got) {
			t.Errorf("%s: %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}

func TestMatchText(t *testing.T) {
	for _, tt := range []struct {
		want, got string
		ok        bool
	}{
		{"42\n", "42\n", true},
		{"42\n", "42", false},
		{"a ${ANY} c\n", "a b b c\n", true},
		{"a ${ANY} c\n", "a b\nc\n", false},
		{"took ${TIME}\n", "took 1.25s\n", true},
		{"took ${TIME}\n", "took 1m3.5s\n", true},
		{"took ${TIME}\n", "took soon\n", false},
		{"n=${NUM}\n", "n=-3.5\n", true},
		{"in ${WORK}/x\n", "in /tmp/w/x\n", true},
		{"in ${WORK}/x\n", "in /tmp/v/x\n", false},
		{"first\n${LINES}\nlast\n", "first\nlast\n", true},
		{"first\n${LINES}\nlast\n", "first\na\nb\nlast\n", true},
		{"first\n${LINES}\n", "first\na\nb", true},
		{"a.b\n${ANY}", "axb\n", false},
	} {
		ok, err := MatchText(tt.want, tt.got, "/tmp/w")
		if err != nil || ok != tt.ok {
			t.Errorf("MatchText(%q, %q) = %v, %v; want %v", tt.want, tt.got, ok, err, tt.ok)
		}
	}
	if _, err := MatchText("${NAME}\n", "x\n", ""); err == nil || !strings.Contains(err.Error(), "unknown placeholder ${NAME}") {
		t.Errorf("unknown placeholder: %v", err)
	}
}

func TestMatchJSON(t *testing.T) {
	for _, tt := range []struct {
		want, got string
		err       string
	}{
		{`{"id":1,"result":{}}`, `{"result":{},"id":1}`, ""},
		{`{"id":1}`, `{"id":1.0}`, ""},
		{`{"id":"${ANY}"}`, `{"id":[1,2]}`, ""},
		{`{"id":"${NUM}"}`, `{"id":"1"}`, `.id: "1", want a number`},
		{`{"v":"lcp ${ANY}"}`, `{"v":"lcp 1.2.3"}`, ""},
		{`{"v":"in ${WORK}"}`, `{"v":"in /w"}`, ""},
		{`{"a":1}`, `{"a":1,"b":2}`, `unexpected "b"`},
		{`{"a":1,"b":2}`, `{"a":1}`, `no "b"`},
		{`{"a":[1]}`, `{"a":[1,2]}`, `.a: 2 elements, want 1`},
		{`{"a":{"b":true}}`, `{"a":{"b":false}}`, `.a.b: false, want true`},
		{`{"a":"x"}`, `{"a":null}`, `.a: null, want "x"`},
		{`{"a":"${X}","b":"${X}"}`, `{"a":{"k":1},"b":{"k":1}}`, ""},
		{`{"a":"${X}","b":"${X}"}`, `{"a":1,"b":2}`, `.b: 2, want 1 (${X})`},
	} {
		err := MatchJSON(json.RawMessage(tt.want), json.RawMessage(tt.got), Vars{}, "/w")
		if got := fmt.Sprint(err); (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(got, tt.err)) {
			t.Errorf("MatchJSON(%s, %s) = %v, want %q", tt.want, tt.got, err, tt.err)
		}
	}
}

// A variable is bound only by a message that matches as a whole, and a
// send uses the bound value.
func TestVariables(t *testing.T) {
	vars := Vars{}
	if err := MatchJSON(json.RawMessage(`{"id":"${Q}","x":1}`), json.RawMessage(`{"id":7,"x":2}`), vars, ""); err == nil || len(vars) != 0 {
		t.Fatalf("a failed match bound %v (%v)", vars, err)
	}
	if err := MatchJSON(json.RawMessage(`{"id":"${Q}","x":1}`), json.RawMessage(`{"id":"e-1","x":1}`), vars, ""); err != nil {
		t.Fatal(err)
	}
	got, err := Expand(json.RawMessage(`{"id":"${Q}","result":{"path":"${WORK}/a \"b\""}}`), vars, `/w"x`)
	if err != nil || string(got) != `{"id":"e-1","result":{"path":"/w\"x/a \"b\""}}` {
		t.Errorf("Expand = %s, %v", got, err)
	}
	if _, err := Expand(json.RawMessage(`{"id":"${R}"}`), vars, ""); err == nil || !strings.Contains(err.Error(), "${R} is not bound") {
		t.Errorf("unbound: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("c\n-- a.py --\nx\n-- cmd --\nlcp call 'a b' \"$WORK\"\n-- stdout --\n${ANY}\n"))
	f.Add([]byte("-- args --\nlcp mcp\n-- send --\n{\"id\":1}\n-- recv --\n{\"id\":\"${ID}\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.txtar", data)
		if err != nil {
			return
		}
		for _, f := range s.Files {
			if checkFixture(f.Name) != nil {
				t.Fatalf("fixture %q escapes", f.Name)
			}
		}
		if _, err := Parse("f.txtar", s.Format()); err != nil {
			t.Fatalf("formatted script does not parse: %v", err)
		}
	})
}
