package cli

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/llm/llmtest"
)

// chatRun runs the lcp command with stdin and environment variables and
// returns what it printed and its exit code.
func chatRun(t *testing.T, stdin string, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return vars[k] }, Args: args}
	code = Main(env)
	return out.String(), errb.String(), code
}

func chatNeedPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// toolFolder writes Python tool files into a temporary folder.
func toolFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const calcPy = `TOOL_LIBRARY_NAME = "Calculator"

def tool_add(a: int, b: int):
    """Adds two integers.

    a: the first addend
    b: the second addend
    """
    return {"output": a + b, "prompt_injection": "Say the sum in French."}

def tool_calc_prompt():
    return "The calculator is exact."
`

// TestChatPromptPythonTool runs one turn against a real Python tool: the
// model calls it, and the next request carries its result and its
// prompt_injection.
func TestChatPromptPythonTool(t *testing.T) {
	chatNeedPython(t)
	dir := toolFolder(t, map[string]string{"calc.py": calcPy})
	srv := llmtest.New(t,
		llmtest.Calls(llmtest.Call("c1", "tool_add", `{"a": "2", "b": 3}`)),
		llmtest.Text("cinq"),
	)
	stdout, stderr, code := chatRun(t, "", nil, "chat", "--tools", dir, "--model", srv.BaseURL()+"#test-model",
		"--system", "Be brief.", "--prompt", "What is 2+3?")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if stdout != "cinq\n" {
		t.Errorf("stdout %q", stdout)
	}
	stderr = withoutDurations(stderr)
	for _, want := range []string{`-> tool_add {"a": "2", "b": 3}`, "<- tool_add: 5", "+ prompt_injection: Say the sum in French."} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := reqs[0]
	if first.Model != "test-model" || first.Messages[0].Role != llm.RoleSystem ||
		first.Messages[0].Content != "Be brief.\n\nThe calculator is exact." || first.LastUserText() != "What is 2+3?" {
		t.Errorf("first request: model %q messages %+v", first.Model, first.Messages)
	}
	if _, set := first.Fields["temperature"]; set {
		t.Error("a temperature was sent without --temperature")
	}
	if diff := cmp.Diff([]string{"tool_add"}, first.ToolNames()); diff != "" {
		t.Errorf("tools mismatch (-want +got):\n%s", diff)
	}
	m, ok := reqs[1].ToolMessage("c1")
	if !ok || m.Content != "5\n\nSay the sum in French." {
		t.Errorf("tool message %+v", m)
	}
}

const approvalPy = `_CONFIRM = None

def set_confirm_handler(h):
    global _CONFIRM
    _CONFIRM = h

def tool_clean(folder: str = "build"):
    """Deletes a folder."""
    decision, reason = _CONFIRM("rm -rf " + folder, "clean")
    if decision in ("allow", "always"):
        return "cleaned " + folder
    return {"success": False, "error": "not approved: " + reason}
`

func TestChatApproval(t *testing.T) {
	chatNeedPython(t)
	dir := toolFolder(t, map[string]string{"cleaner.py": approvalPy})
	for _, tt := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"no terminal", nil, "not approved: "},
		{"yes", []string{"--yes"}, "cleaned build"},
		{"reject", []string{"--approve=reject"}, "not approved: Rejected by the host's approval policy"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Calls(llmtest.Call("c", "tool_clean", `{}`)), llmtest.Text("ok"))
			args := append([]string{"chat", "--tools", dir, "--model", srv.BaseURL(), "--prompt", "clean up"}, tt.flags...)
			_, stderr, code := chatRun(t, "", nil, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			m, _ := srv.Requests()[1].ToolMessage("c")
			if !strings.HasPrefix(m.Content, tt.want) {
				t.Errorf("tool message %q, want it to start with %q", m.Content, tt.want)
			}
			if tt.flags == nil && !strings.Contains(m.Content, "--yes") {
				t.Errorf("the rejection does not say how to approve: %q", m.Content)
			}
		})
	}
}

// TestChatREPL runs turns from piped lines: each line a turn, /reset
// forgetting the conversation, /exit ending.
func TestChatREPL(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three"))
	stdout, stderr, code := chatRun(t, "hello\n\n  \nagain\n/reset\nfresh\n/exit\nignored\n", nil,
		"chat", "--tools", t.TempDir(), "--model", srv.BaseURL(), "--system", "", "--temperature", "0.3", "--max-tokens", "50")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if stdout != "one\ntwo\nthree\n" {
		t.Errorf("stdout %q", stdout)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	roles := func(r llmtest.Request) string {
		var s []string
		for _, m := range r.Messages {
			s = append(s, m.Role+":"+m.Content)
		}
		return strings.Join(s, " ")
	}
	for i, want := range []string{"user:hello", "user:hello assistant:one user:again", "user:fresh"} {
		if got := roles(reqs[i]); got != want {
			t.Errorf("request %d: %s, want %s", i, got, want)
		}
	}
	if reqs[0].Model != "test-model" {
		t.Errorf("model %q: the server's only model was not picked", reqs[0].Model)
	}
	if got := string(reqs[0].Fields["temperature"]); got != "0.3" || reqs[0].MaxTokens != 50 {
		t.Errorf("temperature %s, max_tokens %d", got, reqs[0].MaxTokens)
	}
}

func TestChatModelErrors(t *testing.T) {
	none := t.TempDir() // a tools folder without tools
	t.Run("one shot", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Error(500, `{"error":{"message":"boom"}}`))
		_, stderr, code := chatRun(t, "", nil, "chat", "--tools", none, "--model", srv.BaseURL(), "--prompt", "x")
		if code != ExitEngine || !strings.Contains(stderr, "500 Internal Server Error: boom") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("repl goes on", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Error(503, `{"error":"loading"}`), llmtest.Text("fine"))
		stdout, stderr, code := chatRun(t, "a\nb\n", nil, "chat", "--tools", none, "--model", srv.BaseURL())
		if code != ExitEngine || !strings.Contains(stderr, "loading") || !strings.Contains(stderr, "1 turn(s) failed") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if stdout != "fine\n" {
			t.Errorf("stdout %q", stdout)
		}
		// The failed question was dropped: no two user messages in a row.
		if got := srv.Requests()[1].Messages; len(got) != 2 || got[1].Content != "b" {
			t.Errorf("second request %+v", got)
		}
	})
	t.Run("missing key hint, key never shown", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Error(401, `{"error":{"message":"bad key"}}`), llmtest.Error(401, `{"error":{"message":"Incorrect API key provided: sk-secret-42"}}`))
		_, stderr, _ := chatRun(t, "", nil, "chat", "--tools", none, "--model", srv.BaseURL(), "--prompt", "x")
		if !strings.Contains(stderr, "set LCP_API_KEY or OPENAI_API_KEY") {
			t.Errorf("stderr %q", stderr)
		}
		_, stderr, _ = chatRun(t, "", map[string]string{"OPENAI_API_KEY": "sk-secret-42"}, "chat", "--tools", none, "--model", srv.BaseURL(), "--prompt", "x")
		if strings.Contains(stderr, "sk-secret-42") || !strings.Contains(stderr, "[redacted]") {
			t.Errorf("stderr %q", stderr)
		}
		if got := srv.Requests()[1].Header.Get("Authorization"); got != "Bearer sk-secret-42" {
			t.Errorf("Authorization %q", got)
		}
	})
	t.Run("max steps", func(t *testing.T) {
		loop := llmtest.Calls(llmtest.Call("c", "tool_nope", `{}`))
		srv := llmtest.New(t, loop, loop)
		_, stderr, code := chatRun(t, "", nil, "chat", "--tools", none, "--model", srv.BaseURL(), "--prompt", "x", "--max-steps", "2")
		if code != ExitFailure || !strings.Contains(stderr, "step limit") || !strings.Contains(withoutDurations(stderr), "<- tool_nope failed (404): Tool 'tool_nope' not found.") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

func TestChatUsage(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("from env"))
	srv.Models = []string{"a", "b"}
	none := t.TempDir() // a tools folder without tools
	for _, tt := range []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"no model", nil, []string{"--prompt", "x"}, "chat needs --model"},
		{"not a URL", nil, []string{"--model", "localhost:8080", "--prompt", "x"}, "must start with http"},
		{"two names", nil, []string{"--model", "http://h/v1#a", "--model-name", "b", "--prompt", "x"}, `names model "a" and --model-name "b"`},
		{"several models", nil, []string{"--model", srv.BaseURL(), "--prompt", "x"}, "serves several models (a, b)"},
		{"bad steps", nil, []string{"--model", srv.BaseURL() + "#a", "--max-steps", "0"}, "--max-steps"},
		{"negative temperature", nil, []string{"--model", srv.BaseURL() + "#a", "--temperature", "-1"}, "--temperature must not be negative"},
		{"bad approve", nil, []string{"--model", srv.BaseURL() + "#a", "--approve", "maybe"}, "maybe"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := chatRun(t, "", tt.vars, append([]string{"chat", "--tools", none}, tt.args...)...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q, want %q", code, stderr, tt.want)
			}
		})
	}
	// $LCP_MODEL stands in for --model, --model-name for the fragment.
	stdout, stderr, code := chatRun(t, "", map[string]string{"LCP_MODEL": srv.BaseURL()}, "chat", "--tools", none, "--model-name", "b", "--prompt", "x")
	if code != 0 || stdout != "from env\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if got := srv.Requests()[0].Model; got != "b" {
		t.Errorf("model %q", got)
	}
}

func TestChatStreamAndEscapes(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Calls(llmtest.Call("c", "tool_x\x1b[2J", `{"a":"\u001b[31mred"}`)),
		llmtest.Text("streamed answer"),
	)
	stdout, stderr, code := chatRun(t, "", nil, "chat", "--tools", t.TempDir(),
		"--model", srv.BaseURL(), "--prompt", "x", "--stream")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if stdout != "streamed answer\n" {
		t.Errorf("stdout %q", stdout)
	}
	if strings.ContainsRune(stderr, '\x1b') || !strings.Contains(stderr, `tool_x\u001b[2J`) {
		t.Errorf("escape sequences reach the terminal: %q", stderr)
	}
	if !srv.Requests()[0].Stream {
		t.Error("not streamed")
	}
}

// TestChatCtrlCCancelsTurn sends SIGINT while the model is thinking: the
// turn ends, the session goes on with the next line.
func TestChatCtrlCCancelsTurn(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
			self, err := os.FindProcess(os.Getpid())
			if err == nil {
				err = self.Signal(os.Interrupt)
			}
			if err != nil {
				t.Error(err)
			}
			<-r.Context().Done()
		}},
		llmtest.Text("after"),
	)
	stdout, stderr, code := chatRun(t, "slow\nnext\n", nil, "chat", "--tools", t.TempDir(), "--model", srv.BaseURL())
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "(turn cancelled)") || stdout != "after\n" {
		t.Errorf("stdout %q stderr %q", stdout, stderr)
	}
	if got := srv.Requests()[1].Messages; len(got) != 2 || got[1].Content != "next" {
		t.Errorf("second request %+v", got)
	}
}

const hostPy = `def tool_peek(discussion_instance=None):
    """Reads the conversation."""
    if discussion_instance is None:
        return "None"
    msgs = discussion_instance.messages
    return msgs[0]["content"] + " | " + str(len(msgs))

def tool_caption(subject: str, lollms_client_instance=None):
    """Writes a caption with the host's LLM."""
    try:
        return lollms_client_instance.generate_text("Caption " + subject, n_predict=16)
    except RuntimeError as e:
        return "RuntimeError: " + str(e)
`

// TestChatHostServices checks what Python tools get from lcp chat: the
// conversation as discussion_instance and the model as
// lollms_client_instance.generate_text.
func TestChatHostServices(t *testing.T) {
	chatNeedPython(t)
	dir := toolFolder(t, map[string]string{"host.py": hostPy})
	t.Run("discussion_instance", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Calls(llmtest.Call("p", "tool_peek", `{}`)), llmtest.Text("ok"))
		_, stderr, code := chatRun(t, "", nil, "chat", "--tools", dir, "--model", srv.BaseURL(), "--prompt", "remember plum", "--system", "")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		m, _ := srv.Requests()[1].ToolMessage("p")
		if m.Content != "remember plum | 2" {
			t.Errorf("tool message %q", m.Content)
		}
	})
	t.Run("generate_text", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Calls(llmtest.Call("g", "tool_caption", `{"subject":"a storm"}`)))
		srv.Add(llmtest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
			// Either the tool's generation request, or the next step when
			// the engine has no LLM: answer both as text.
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"A dark sea."}}]}`))
		}}, llmtest.Text("done"))
		_, stderr, code := chatRun(t, "", nil, "chat", "--tools", dir, "--model", srv.BaseURL(), "--prompt", "caption", "--system", "")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		reqs := srv.Requests()
		gen := reqs[1]
		if gen.LastUserText() != "Caption a storm" || gen.MaxTokens != 16 || len(gen.Tools) != 0 {
			t.Errorf("generation request: %s", gen.Body)
		}
		if m, _ := reqs[2].ToolMessage("g"); m.Content != "A dark sea." {
			t.Errorf("tool message %q", m.Content)
		}
	})
}

// durationRE matches the " (1.2s)" that chat prints after a tool's name
// when its call took a second or more: how long a call takes depends on
// the machine, so the tests' expectations leave it out.
var durationRE = regexp.MustCompile(` \(\d+\.\ds\)`)

// withoutDurations removes the calls' durations from chat's output.
func withoutDurations(s string) string { return durationRE.ReplaceAllString(s, "") }
