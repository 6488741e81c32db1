package lcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/tool"
)

// handlersPy keeps the confirm handler the engine gives it at load, as
// the built-in libraries do, and asks through the injected
// user_interaction_handler.
const handlersPy = `_CONFIRM_HANDLER = None


def set_confirm_handler(handler):
    global _CONFIRM_HANDLER
    _CONFIRM_HANDLER = handler


def tool_delete(path: str):
    """Deletes, after asking.

    Args:
        path: what to delete
    """
    decision, reason = _CONFIRM_HANDLER("rm " + path, "delete " + path)
    return {"success": decision != "reject", "output": decision, "error": reason}


def tool_ask(user_interaction_handler=None):
    """Asks a name."""
    return user_interaction_handler({"type": "text", "title": "Name", "prompt": "Your name?"})
`

// TestEngineHandlersSwapMidSession: the engine's confirm and interaction
// handlers can be set and swapped while modules are loaded (seed 000 §6):
// the loaded module's next confirmation gets the new handler; nil gives
// the requests back to Config.Respond; a call's own callbacks win.
func TestEngineHandlersSwapMidSession(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "files.py"), []byte(handlersPy), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{dir}, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	call := func(name, args string) *tool.Result {
		t.Helper()
		return eng.ExecuteTool(ctx, name, []byte(args))
	}
	// Loaded with no handler: refused with the host's reason.
	if res := call("tool_delete", `{"path": "a"}`); res.Success || !strings.Contains(res.Error, tool.NoPerson) {
		t.Fatalf("no handler: %+v", res)
	}
	var seen []string
	eng.SetConfirmHandler(func(_ context.Context, r *tool.Request) (tool.Decision, string) {
		seen = append(seen, r.Label)
		return tool.Allow, ""
	})
	if res := call("tool_delete", `{"path": "b"}`); !res.Success || res.Text() != "allow" || len(seen) != 1 || seen[0] != "delete b" {
		t.Fatalf("after SetConfirmHandler: %+v, seen %q", res, seen)
	}
	eng.SetConfirmHandler(func(context.Context, *tool.Request) (tool.Decision, string) { return tool.Reject, "not today" })
	if res := call("tool_delete", `{"path": "c"}`); res.Success || res.Error != "not today" {
		t.Fatalf("after the swap: %+v", res)
	}
	// A call's own callback wins over the engine's.
	res, err := eng.Call(ctx, "tool_delete", []byte(`{"path": "d"}`), &tool.CallOptions{
		Confirm: func(context.Context, *tool.Request) (tool.Decision, string) { return tool.Always, "" }})
	if err != nil || !res.Success || res.Text() != "always" {
		t.Fatalf("a call's own callback: %+v, %v", res, err)
	}
	eng.SetConfirmHandler(nil)
	if res := call("tool_delete", `{"path": "e"}`); res.Success || !strings.Contains(res.Error, tool.NoPerson) {
		t.Fatalf("handler removed: %+v", res)
	}

	// A declined question is None for the tool.
	if res := call("tool_ask", `{}`); res.Text() != "null" {
		t.Fatalf("a question without a handler: %+v", res)
	}
	eng.SetUserInteractionHandler(func(_ context.Context, r *tool.Request) (any, bool) { return "Ada", true })
	if res := call("tool_ask", `{}`); !res.Success || res.Text() != "Ada" {
		t.Fatalf("after SetUserInteractionHandler: %+v", res)
	}
	eng.SetUserInteractionHandler(func(context.Context, *tool.Request) (any, bool) { return nil, false })
	if res := call("tool_ask", `{}`); res.Text() != "null" {
		t.Fatalf("after the swap: %+v", res)
	}
}
