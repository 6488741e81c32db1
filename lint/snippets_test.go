package lint

import (
	"slices"
	"strings"
	"testing"
)

// doc is a docstring long enough for vague-description.
const doc = `"""Does what the test needs for the user, as described."""`

// TestSnippets: one-line expectations of the rules on small tools; want
// lists the rule ids found, in order (undocumented-parameter left out).
func TestSnippets(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"secret from the environment", `
import os
def tool_x():
    ` + doc + `
    api_key = os.environ["SERVICE_API_KEY"]
    return {"success": True, "output": api_key}
`, []string{"secret-leak"}},
		{"a long slice is not a mask", `
def tool_x(api_key: str):
    ` + doc + `
    return {"success": True, "output": api_key[4:]}
`, []string{"secret-leak"}},
		{"hashing masks", `
import hashlib
def tool_x(api_key: str):
    ` + doc + `
    return {"success": True, "output": hashlib.sha256(api_key.encode()).hexdigest()[:8]}
`, nil},
		{"a secret in a header is not a leak", `
import urllib.request
_CONFIRM_HANDLER = None
def tool_x(url: str, api_key: str):
    ` + doc + `
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {api_key}"})
    d, _ = _CONFIRM_HANDLER(url, "fetch")
    if d != "allow":
        return {"success": False, "error": "refused"}
    with urllib.request.urlopen(req) as r:
        return {"success": True, "output": r.read().decode()}
`, nil},
		{"a secret through a helper that prints it", `
def _debug(value):
    print("debug:", value)
def tool_x(password: str, user: str):
    ` + doc + `
    _debug(user)
    _debug(password)
    return {"success": True, "output": "ok"}
`, []string{"secret-leak"}},
		{"walrus check", `
def tool_x(user_interaction_handler=None):
    ` + doc + `
    if (name := user_interaction_handler({"type": "text", "title": "t", "prompt": "p"})) is None:
        return {"success": False, "error": "Cancelled by user."}
    return {"success": True, "output": name.upper()}
`, nil},
		{"answer used in a loop before the check", `
def tool_x(user_interaction_handler=None):
    ` + doc + `
    for _ in range(2):
        name = user_interaction_handler({"type": "text", "title": "t", "prompt": "p"})
        out = name.upper()
    return {"success": True, "output": out}
`, []string{"unchecked-answer"}},
		{"dict spread keeps the shape", `
BASE = {"success": True}
def tool_x():
    ` + doc + `
    base = {"success": True}
    return {**base, "output": "ok"}
`, nil},
		{"helper result shape", `
def _ok(text):
    return {"success": True, "output": text}
def _bad(text):
    return "answer: " + text
def tool_x(flag: bool = False):
    ` + doc + `
    if flag:
        return _ok("yes")
    return _bad("no")
`, []string{"noncanonical-return"}},
		{"mutual recursion terminates", `
def _a(n):
    return _b(n)
def _b(n):
    return _a(n)
def tool_x(n: int = 1):
    ` + doc + `
    return _a(n)
`, nil},
		{"try/finally return", `
def tool_x():
    ` + doc + `
    try:
        pass
    finally:
        return {"success": True, "output": "done"}
`, nil},
		{"while True without break never falls through", `
def tool_x(n: int = 3):
    ` + doc + `
    while True:
        n -= 1
        if n < 0:
            return {"success": True, "output": "done"}
`, nil},
		{"while True with break falls through", `
def tool_x(n: int = 3):
    ` + doc + `
    while True:
        n -= 1
        if n < 0:
            break
`, []string{"noncanonical-return"}},
		{"a tool calling a tool that spawns", `
import subprocess
def tool_run(cmd: str):
    ` + doc + `
    _CONFIRM_HANDLER = None
    return {"success": True, "output": "nothing"}
def tool_y(cmd: str):
    ` + doc + `
    return tool_z(cmd)
def tool_z(cmd: str):
    ` + doc + `
    subprocess.run(cmd, shell=True)
    return {"success": True, "output": "ran"}
`, []string{"risky-pattern", "risky-pattern"}},
		{"confirm handler from the config", `
import subprocess
_CONFIG = {}
def tool_x(cmd: str):
    ` + doc + `
    ask = _CONFIG.get("confirm_handler")
    if ask is None:
        return {"success": False, "error": "no handler"}
    decision, reason = ask(cmd, "Run")
    if decision not in ("allow", "always"):
        return {"success": False, "error": reason}
    subprocess.run(cmd, shell=True)
    return {"success": True, "output": "ran"}
`, nil},
		{"nested function steps are the library's", `
import os
def tool_x(path: str):
    ` + doc + `
    def later():
        os.system("make")
    return {"success": True, "output": "scheduled"}
`, []string{"risky-pattern"}},
		{"async tool", `
import asyncio
async def tool_x(seconds: float = 1.0):
    ` + doc + `
    await asyncio.sleep(seconds)
    return {"success": True, "output": "slept"}
`, nil},
		{"match statement", `
def tool_x(kind: str):
    ` + doc + `
    match kind:
        case "a" | "b":
            return {"success": True, "output": kind}
    return "unknown"
`, []string{"noncanonical-return"}},
		{"path through a for loop over a list parameter", `
def tool_x(files: list):
    ` + doc + `
    out = []
    for name in files:
        with open(name) as f:
            out.append(f.read())
    return {"success": True, "output": "".join(out)}
`, []string{"path-escape"}},
		{"integer parameter paths are not paths", `
def tool_x(n: int):
    ` + doc + `
    with open(f"data_{n}.txt") as f:
        return {"success": True, "output": f.read()}
`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range Check("snippet.py", []byte(strings.TrimLeft(c.src, "\n")), nil) {
				if f.Code != "undocumented-parameter" {
					got = append(got, f.Code)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
				for _, f := range Check("snippet.py", []byte(strings.TrimLeft(c.src, "\n")), nil) {
					t.Log(f)
				}
			}
		})
	}
}
