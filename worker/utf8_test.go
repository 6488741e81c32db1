package worker

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

const counterLib = `
_n = 0

def tool_bump(s: str) -> dict:
    global _n
    _n += 1
    return {"n": _n, "s": s}
`

// TestInvalidUTF8ArgumentKeepsWorker sends a string argument holding bytes
// that are not UTF-8 to a real worker: the call is served with U+FFFD in
// their place, and the worker (and the library's state) survives.
func TestInvalidUTF8ArgumentKeepsWorker(t *testing.T) {
	requirePython(t)
	p, _ := testPool(t, nil)
	ws := t.TempDir()
	lib := writeLib(t, "counter", counterLib)
	wantValue(t, mustCall(t, p, ws, lib, "tool_bump", `{"s":"ok"}`), `{"n":1,"s":"ok"}`)
	for _, tc := range []struct {
		name, args, want string
	}{
		{"lone byte", "{\"s\":\"a\xffb\"}", "a\uFFFDb"},
		{"truncated rune", "{\"s\":\"x\xe2\x82\"}", "x\uFFFD"},
		{"surrogate half", "{\"s\":\"\xed\xa0\x80\"}", "\uFFFD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCall(t, p, ws, lib, "tool_bump", tc.args)
			if r.StateReset {
				t.Fatal("the worker was restarted by the argument")
			}
			var v struct {
				N int
				S string
			}
			if err := json.Unmarshal(r.Value, &v); err != nil || r.Exception != nil {
				t.Fatalf("reply %s, exception %+v, err %v", r.Value, r.Exception, err)
			}
			if v.S != tc.want {
				t.Errorf("s = %q, want %q", v.S, tc.want)
			}
		})
	}
	r := mustCall(t, p, ws, lib, "tool_bump", `{"s":"end"}`)
	if r.StateReset {
		t.Fatal("the library's state was lost")
	}
	wantValue(t, r, `{"n":5,"s":"end"}`)
}

// FuzzValidate checks that whatever bytes arrive as arguments, validate
// either refuses them or returns valid UTF-8 JSON, never touching the
// caller's request.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"b"}`, "{\"a\":\"\xff\"}", "{\"a\":[\"\xc3\"]}", `[1]`, `{"a":`, "\xff", `{"\u00e9":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		orig := append([]byte(nil), args...)
		req := &Request{Workspace: "/ws", Library: Library{Path: "/lib.py"}, Args: args}
		out, err := validate(req)
		if !bytes.Equal(req.Args, orig) {
			t.Fatal("validate changed the caller's request")
		}
		if err != nil || len(out.Args) == 0 { // empty means {}
			return
		}
		if !utf8.Valid(out.Args) || !json.Valid(out.Args) {
			t.Fatalf("validate let through %q", out.Args)
		}
	})
}
