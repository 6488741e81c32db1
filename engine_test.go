package lcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/llm/llmtest"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

func needPython(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}
type addOut struct {
	Sum int `json:"sum"`
}

func newOmniEngine(t *testing.T, respond func(context.Context, *tool.Request) tool.Response) *lcp.Engine {
	t.Helper()
	add, err := native.Typed("add", "Adds.", func(_ context.Context, in addIn) (addOut, error) { return addOut{in.A + in.B}, nil })
	if err != nil {
		t.Fatal(err)
	}
	natives, err := native.New(nil, add)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := lcp.New(context.Background(), &lcp.Config{
		ToolsFolders: []string{"testdata/omni"},
		Workspace:    t.TempDir(),
		Toolsets:     []tool.Toolset{natives},
		Respond:      respond,
		MaxDepth:     3,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

func TestOmniToolReachesTheInventory(t *testing.T) {
	needPython(t)
	eng := newOmniEngine(t, nil)
	res := eng.ExecuteTool(context.Background(), "tool_sum_via_host", json.RawMessage(`{"a":2,"b":"3"}`))
	if !res.Success || res.Text() != "10" || string(res.Payload["sum"]) != "5" {
		t.Fatalf("omni call: %+v %s", res, res.Text())
	}
}

func TestOmniToolWithoutLLMIsGuarded(t *testing.T) {
	needPython(t)
	eng := newOmniEngine(t, nil)
	res := eng.ExecuteTool(context.Background(), "tool_caption", json.RawMessage(`{"subject":"a lighthouse"}`))
	if res.Success || !strings.Contains(res.Error, "Missing required modality") {
		t.Fatalf("caption without LLM: %+v", res)
	}
}

func TestNestedCallAsksTheOuterCaller(t *testing.T) {
	needPython(t)
	var asked []string
	eng := newOmniEngine(t, func(_ context.Context, r *tool.Request) tool.Response {
		asked = append(asked, r.Label)
		return r.Declined("not today")
	})
	res := eng.ExecuteTool(context.Background(), "tool_ask_nested", nil)
	if len(asked) != 1 || asked[0] != "guarded action" {
		t.Fatalf("asked %v", asked)
	}
	if res.Success || !strings.Contains(res.Error, "refused: not today") {
		t.Fatalf("nested result: %+v", res)
	}
}

func TestNestedCallsAreBounded(t *testing.T) {
	needPython(t)
	eng := newOmniEngine(t, nil)
	res := eng.ExecuteTool(context.Background(), "tool_recurse", nil)
	raw, _ := json.Marshal(res)
	if !strings.Contains(string(raw), "nested tool calls are limited to 3 levels") {
		t.Fatalf("recursion: %s", raw)
	}
}

func TestDefaultLibrary(t *testing.T) {
	eng, err := lcp.New(context.Background(), &lcp.Config{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	infos, err := eng.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, i := range infos {
		names[i.Name] = i.Library.ID
	}
	for tl, lib := range map[string]string{
		"tool_read_file": "workspace_tools", "tool_execute_shell_command": "system_shell",
		"tool_execute_python_code": "execute_python", "tool_prepare_deployment": "user_interaction_demo",
		"tool_configure_service_connection": "user_interactive_tools",
	} {
		if names[tl] != lib {
			t.Errorf("default library lacks %s in %s (have %v)", tl, lib, names)
		}
	}
	// Every built-in tool, Go or Python, has a title and says whether it
	// only reads, for MCP clients.
	for _, i := range infos {
		a := i.Annotations
		if i.Title == "" || a == nil || a.Title != i.Title || a.ReadOnlyHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: title %q, annotations %+v", i.Name, i.Title, a)
			continue
		}
		if !*a.ReadOnlyHint && (a.DestructiveHint == nil || a.IdempotentHint == nil) {
			t.Errorf("%s changes things but does not say whether it destroys or repeats safely: %+v", i.Name, a)
		}
	}
	if len(infos) < 13 {
		t.Errorf("%d built-in tools", len(infos))
	}
	// Writes and reads go through the workspace.
	res := eng.ExecuteTool(context.Background(), "tool_write_file", json.RawMessage(`{"file_name":"a/b.txt","content":"hi"}`))
	if !res.Success {
		t.Fatalf("write: %+v", res)
	}
	res = eng.ExecuteTool(context.Background(), "tool_read_file", json.RawMessage(`{"file_name":"a/b.txt"}`))
	if !res.Success || !strings.Contains(res.Text(), "hi") {
		t.Fatalf("read: %+v", res)
	}
	res = eng.ExecuteTool(context.Background(), "tool_read_file", json.RawMessage(`{"file_name":"../../etc/passwd"}`))
	if res.Success {
		t.Fatalf("escape: %+v", res)
	}
}

func TestInvalidAutonomyIsAConfigError(t *testing.T) {
	_, err := lcp.New(context.Background(), &lcp.Config{HostToolConfigs: map[string]map[string]any{"system_shell": {"autonomy_level": "yolo"}}})
	if err == nil || !strings.Contains(err.Error(), "yolo") {
		t.Fatalf("got %v", err)
	}
}

func TestOmniToolGeneratesWithTheHostLLM(t *testing.T) {
	needPython(t)
	srv := llmtest.New(t, llmtest.Text("  A lighthouse holds the storm at bay.  "))
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{"testdata/omni"}, Workspace: t.TempDir(), LLM: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	res := eng.ExecuteTool(context.Background(), "tool_caption", json.RawMessage(`{"subject":"a lighthouse"}`))
	if !res.Success || res.Text() != "A lighthouse holds the storm at bay." {
		t.Fatalf("caption: %+v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].LastUserText() != "Caption for a lighthouse" || reqs[0].MaxTokens != 32 {
		t.Fatalf("the LLM saw %+v", reqs)
	}
}

// recordingModel is a tool.Generator that answers with a fixed text and
// records what it was asked.
type recordingModel struct {
	mu      sync.Mutex
	answer  string
	prompts []string
	options []string
}

func (m *recordingModel) GenerateJSON(_ context.Context, prompt string, options json.RawMessage) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prompts = append(m.prompts, prompt)
	m.options = append(m.options, string(options))
	return m.answer, nil
}

// Without a configured LLM, a call uses the model its caller gives (what
// lcp mcp does with a client that offers sampling).
func TestOmniToolGeneratesWithTheCallersModel(t *testing.T) {
	needPython(t)
	eng := newOmniEngine(t, nil)
	model := &recordingModel{answer: " From the client's model. "}
	res, err := eng.Call(context.Background(), "tool_caption", json.RawMessage(`{"subject":"a fox"}`), &tool.CallOptions{Generator: model})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.Text() != "From the client's model." {
		t.Fatalf("caption: %+v %s", res, res.Text())
	}
	if len(model.prompts) != 1 || model.prompts[0] != "Caption for a fox" || !strings.Contains(model.options[0], `"n_predict":32`) {
		t.Fatalf("the model saw %q with %q", model.prompts, model.options)
	}
}

// A configured LLM is the model of every call, whatever the caller gives.
func TestConfiguredLLMWinsOverTheCallersModel(t *testing.T) {
	needPython(t)
	srv := llmtest.New(t, llmtest.Text("From the configured model."))
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{"testdata/omni"}, Workspace: t.TempDir(), LLM: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	model := &recordingModel{answer: "from the caller"}
	res, err := eng.Call(context.Background(), "tool_caption", json.RawMessage(`{"subject":"a fox"}`), &tool.CallOptions{Generator: model})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "From the configured model." || len(model.prompts) != 0 {
		t.Fatalf("caption %q; the caller's model was asked %d times", res.Text(), len(model.prompts))
	}
}

// Native tools ask the call's model with tool.Generate.
func TestNativeToolGenerates(t *testing.T) {
	ask, err := native.Func(tool.Info{Name: "ask", Description: "Asks the model."}, func(ctx context.Context, args map[string]any) (any, error) {
		return tool.Generate(ctx, "Say hi", json.RawMessage(`{"n_predict":5}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	natives, _ := native.New(nil, ask)
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolFiles: []string{filepath.Join(t.TempDir(), "none.py")}, Toolsets: []tool.Toolset{natives}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	res, err := eng.Call(context.Background(), "ask", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || !strings.Contains(res.Error, "no language model") {
		t.Fatalf("without a model: %+v", res)
	}
	res, err = eng.Call(context.Background(), "ask", nil, &tool.CallOptions{Generator: &recordingModel{answer: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.Text() != "hi" {
		t.Fatalf("with a model: %+v", res)
	}
}

// What a Python tool prints is an event of its call: the call's own
// subscriber and the engine's see it; the result does not carry it.
func TestPrintedOutputIsAnEventOfTheCall(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	src := "def tool_chatty(n: int):\n    \"\"\"Prints and returns.\"\"\"\n    print('working on', n, flush=True)\n    return n + 1\n"
	if err := os.WriteFile(filepath.Join(dir, "chatty.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var engineWide, perCall []tool.Event
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{dir}, Workspace: dir,
		OnEvent: func(e tool.Event) { mu.Lock(); engineWide = append(engineWide, e); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	res, err := eng.Call(context.Background(), "tool_chatty", json.RawMessage(`{"n":"41"}`), &tool.CallOptions{CallID: "call-1",
		OnEvent: func(e tool.Event) { mu.Lock(); perCall = append(perCall, e); mu.Unlock() }})
	if err != nil || res.Text() != "42" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	text := func(evs []tool.Event) string {
		mu.Lock()
		defer mu.Unlock()
		var b strings.Builder
		for _, e := range evs {
			if e.Kind == tool.EventOutput && e.CallID == "call-1" && e.Tool == "tool_chatty" && e.Stream == "stdout" {
				b.WriteString(e.Text)
			}
		}
		return b.String()
	}
	deadline := time.Now().Add(5 * time.Second)
	for (text(perCall) != "working on 41\n" || text(engineWide) != "working on 41\n") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if text(perCall) != "working on 41\n" || text(engineWide) != "working on 41\n" {
		t.Errorf("per call %q, engine-wide %q", text(perCall), text(engineWide))
	}
}

// A Python tool's progress_handler and log_handler calls are events of
// its call, as a native tool's ReportProgress and Log are.
func TestPythonProgressAndLogAreEventsOfTheCall(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	src := `def tool_steps(n: int, progress_handler=None, log_handler=None):
    """Works in steps and says how far it got."""
    log_handler("starting", level="notice", data={"n": n})
    for i in range(n):
        progress_handler(i + 1, total=n, message=f"step {i + 1}")
    return n
`
	if err := os.WriteFile(filepath.Join(dir, "steps.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{dir}, Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	infos, _ := eng.Tools(context.Background())
	if len(infos) != 1 || strings.Contains(string(infos[0].InputSchema), "handler") {
		t.Fatalf("the handlers are in the schema: %s", infos[0].InputSchema)
	}
	var mu sync.Mutex
	var evs []tool.Event
	res, err := eng.Call(context.Background(), "tool_steps", json.RawMessage(`{"n": 3}`), &tool.CallOptions{
		OnEvent: func(e tool.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }})
	if err != nil || res.Text() != "3" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	var sawLog bool
	var last *tool.Event
	for i, e := range evs {
		switch e.Kind {
		case tool.EventLog:
			var data struct{ N int }
			if e.Level == "notice" && e.Text == "starting" && json.Unmarshal(e.Data, &data) == nil && data.N == 3 {
				sawLog = true
			}
		case tool.EventProgress:
			last = &evs[i]
		}
	}
	if !sawLog {
		t.Errorf("no log event in %+v", evs)
	}
	// Progress is coalesced: at least the last report arrives.
	if last == nil || last.Progress != 3 || last.Total != 3 || last.Text != "step 3" || last.Tool != "tool_steps" {
		t.Errorf("last progress %+v (events %+v)", last, evs)
	}
}

// The engine offers the mount API itself.
func TestEngineMountAPI(t *testing.T) {
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{"testdata/omni"}, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if !eng.IsToolAvailable(context.Background(), "tool_recurse") || eng.IsToolAvailable(context.Background(), "tool_nope") {
		t.Error("IsToolAvailable")
	}
	if _, err := eng.MountToolLibrary("no_such_library"); err == nil {
		t.Error("mounting an unknown library")
	}
	if len(eng.Files()) == 0 {
		t.Error("no files")
	}
	info, err := eng.LoadToolByName(context.Background(), "tool_recurse")
	if err != nil || info.Name != "tool_recurse" {
		t.Errorf("LoadToolByName = %+v, %v", info, err)
	}
}

// The engine's prompts: the libraries' system prompts, then the host's.
func TestEnginePrompts(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	lib := "def tool_notes_prompt():\n    return 'Keep notes short.'\n\ndef tool_note(text: str):\n    \"\"\"Writes a note.\"\"\"\n    return 'noted'\n"
	if err := os.WriteFile(filepath.Join(dir, "notes.py"), []byte(lib), 0o644); err != nil {
		t.Fatal(err)
	}
	host, err := tool.NewPrompts(tool.PromptDef{
		Prompt: tool.Prompt{Name: "summarize", Arguments: []tool.PromptArgument{{Name: "topic", Required: true}}},
		Get: func(_ context.Context, args map[string]string) (*tool.PromptResult, error) {
			return &tool.PromptResult{Messages: []tool.PromptMessage{{Role: "user", Content: tool.TextContent("Summarize " + args["topic"])}}}, nil
		},
		Complete: func(context.Context, string, string, map[string]string) ([]string, error) {
			return []string{"news"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := lcp.New(context.Background(), &lcp.Config{ToolsFolders: []string{dir}, Workspace: t.TempDir(), Prompts: host})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	list, err := eng.Prompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "tool_notes_prompt" || list[1].Name != "summarize" {
		t.Fatalf("prompts = %+v", list)
	}
	got, err := eng.GetPrompt(ctx, "tool_notes_prompt", nil)
	if err != nil || got.Messages[0].Content.Text != "Keep notes short." {
		t.Fatalf("library prompt = %+v, %v", got, err)
	}
	got, err = eng.GetPrompt(ctx, "summarize", map[string]string{"topic": "the week"})
	if err != nil || got.Messages[0].Content.Text != "Summarize the week" {
		t.Fatalf("host prompt = %+v, %v", got, err)
	}
	if v, err := eng.CompletePrompt(ctx, "summarize", "topic", "", nil); err != nil || len(v) != 1 {
		t.Errorf("completion = %v, %v", v, err)
	}
}
