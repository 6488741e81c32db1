package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/mcp"
)

// parse runs a command's flag parsing with a run function that only
// keeps the options, and returns the error cobra or the run function gave.
func parse(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	return cmd.Execute()
}

func testEnv() *Env {
	return &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
}

func TestCallFlags(t *testing.T) {
	var got *CallOptions
	cmd := NewCmdCall(testEnv(), func(o *CallOptions) error { got = o; return nil })
	err := parse(t, cmd, "--tools", "a", "--tools", "b", "--file", "f.py", "--host-config", "h.json", "--workspace", "/w",
		"--python", "py3", "--timeout", "30s", "--no-coerce", "--llm", "http://x/v1#m", "--mcp-config", "m.json",
		"--mcp-server", "npx -y pkg", "--context", `{"user":"ada"}`, "--json", "-y", "--mount", "lib1", "--mount", "lib2", "--builtins", "--precise", "--validate-args",
		"tool_greet", "name=Ada", "n=5")
	if err != nil {
		t.Fatal(err)
	}
	want := inventoryFlags{tools: []string{"a", "b"}, files: []string{"f.py"}, hostConfig: "h.json", workspace: "/w", python: "py3",
		timeout: 30 * time.Second, noCoerce: true, llm: "http://x/v1#m", mcpConfig: "m.json", mcpServers: []string{"npx -y pkg"},
		mounts: []string{"lib1", "lib2"}, builtins: true, precise: true, validate: true, status: io.Discard}
	if diff := cmp.Diff(want, got.inv, cmp.AllowUnexported(inventoryFlags{}), cmp.Comparer(func(a, b func(string) string) bool { return true })); diff != "" {
		t.Errorf("inventory flags mismatch (-want +got):\n%s", diff)
	}
	if got.tool != "tool_greet" || !cmp.Equal(got.pairs, []string{"name=Ada", "n=5"}) || got.context != `{"user":"ada"}` || !got.json ||
		!got.approval.yes || got.approval.approve != "ask" || !cmp.Equal(got.inv.mounts, []string{"lib1", "lib2"}) {
		t.Errorf("options %+v", got)
	}
	p, err := got.approval.policy()
	if err != nil || p.Approve != hitl.ApproveAllow {
		t.Errorf("policy %+v, %v", p, err)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "call needs a TOOL name"},
		{[]string{"--batch", "x.jsonl", "tool"}, "--batch takes no TOOL argument"},
		{[]string{"--timeout", "soon", "t"}, "invalid argument"},
	} {
		err := parse(t, NewCmdCall(testEnv(), func(*CallOptions) error { t.Error("ran"); return nil }), tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || ExitCode(err) != ExitUsage {
			t.Errorf("%v: %v (exit %d), want a usage error with %q", tt.args, err, ExitCode(err), tt.want)
		}
	}
	var batch *CallOptions
	if err := parse(t, NewCmdCall(testEnv(), func(o *CallOptions) error { batch = o; return nil }), "--batch", "-", "--approve", "reject"); err != nil {
		t.Fatal(err)
	}
	if batch.batch != "-" || batch.tool != "" || batch.approval.approve != "reject" {
		t.Errorf("batch options %+v", batch)
	}
}

func TestApprovalFlags(t *testing.T) {
	for _, tt := range []struct {
		a    approvalFlags
		want hitl.Approval
		err  string
	}{
		{approvalFlags{approve: "ask"}, hitl.ApproveAsk, ""},
		{approvalFlags{approve: "allow"}, hitl.ApproveAllow, ""},
		{approvalFlags{approve: "ask", yes: true}, hitl.ApproveAllow, ""},
		{approvalFlags{approve: "reject"}, hitl.ApproveReject, ""},
		{approvalFlags{approve: "reject", yes: true}, "", "--yes contradicts --approve=reject"},
		{approvalFlags{approve: "maybe"}, "", "unknown approval policy"},
	} {
		p, err := tt.a.policy()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || ExitCode(err) != ExitUsage {
				t.Errorf("%+v: %v", tt.a, err)
			}
			continue
		}
		if err != nil || p.Approve != tt.want || !strings.Contains(p.RejectReason, "--approve=reject") {
			t.Errorf("%+v: %+v, %v", tt.a, p, err)
		}
	}
}

func TestListAndCheckFlags(t *testing.T) {
	var l *ListOptions
	if err := parse(t, NewCmdList(testEnv(), func(o *ListOptions) error { l = o; return nil }),
		"--format", "openai", "--json", "--prompts", "--dynamic", "--tools", "t", "--precise", "--libraries", "--mount", "system_shell", "--builtins"); err != nil {
		t.Fatal(err)
	}
	if l.format != "openai" || !l.json || !l.prompts || !l.dynamic || !cmp.Equal(l.inv.tools, []string{"t"}) || !l.inv.precise || !l.libraries ||
		!cmp.Equal(l.inv.mounts, []string{"system_shell"}) || !l.inv.builtins {
		t.Errorf("list options %+v", l)
	}
	var c *CheckOptions
	if err := parse(t, NewCmdCheck(testEnv(), func(o *CheckOptions) error { c = o; return nil }), "--json", "--file", "x.py", "--mount", "execute_python"); err != nil {
		t.Fatal(err)
	}
	if !c.json || !cmp.Equal(c.inv.files, []string{"x.py"}) || !cmp.Equal(c.inv.mounts, []string{"execute_python"}) {
		t.Errorf("check options %+v", c)
	}
	c = nil
	if err := parse(t, NewCmdCheck(testEnv(), func(o *CheckOptions) error { c = o; return nil }), "--format", "sarif", "--fail-on", "warning"); err != nil {
		t.Fatal(err)
	}
	if c.format != "sarif" || c.failOn != "warning" || !c.formatSet || c.json {
		t.Errorf("check options %+v", c)
	}
}

func TestNewFlags(t *testing.T) {
	var n *NewOptions
	if err := parse(t, NewCmdNew(testEnv(), func(o *NewOptions) error { n = o; return nil }), "my_notes", "--dir", "tools"); err != nil {
		t.Fatal(err)
	}
	if n.name != "my_notes" || n.dir != "tools" {
		t.Errorf("new options %+v", n)
	}
	for _, args := range [][]string{{}, {"a", "b"}} {
		if err := parse(t, NewCmdNew(testEnv(), func(*NewOptions) error { t.Error("ran"); return nil }), args...); ExitCode(err) != ExitUsage {
			t.Errorf("lcp new %q: %v, want a usage error", args, err)
		}
	}
}

func TestMCPAndServeFlags(t *testing.T) {
	var m *MCPOptions
	if err := parse(t, NewCmdMCP(testEnv(), func(o *MCPOptions) error { m = o; return nil }),
		"--http", "", "--token", "tok", "--allow-origin", "http://a", "--allow-host", "h", "--approve", "allow", "-v", "--watch", "--mount", "m",
		"--validate-args",
		"--stateless", "--metrics-addr", "127.0.0.1:9100", "--max-sessions", "50", "--session-idle", "3m", "--max-calls", "9",
		"--max-calls-per-session", "2", "--max-batch", "4", "--max-result-bytes", "1000", "--drain-timeout", "5s", "--log-format", "json"); err != nil {
		t.Fatal(err)
	}
	if !m.useHTTP || m.http != "" || m.token != "tok" || !cmp.Equal(m.origins, []string{"http://a"}) || !cmp.Equal(m.hosts, []string{"h"}) ||
		m.approval.approve != "allow" || !m.log.verbose || !m.watch.watch || !cmp.Equal(m.inv.mounts, []string{"m"}) || !m.inv.validate ||
		!m.stateless || m.metricsAddr != "127.0.0.1:9100" || m.maxSessions != 50 ||
		m.sessionIdle != 3*time.Minute || m.maxCalls != 9 || m.maxCallsPerSession != 2 || m.maxBatch != 4 || m.maxResultBytes != 1000 ||
		m.drain.timeout != 5*time.Second || m.log.format != "json" {
		t.Errorf("mcp options %+v", m)
	}
	// The deadlines: defaults, values, and 0 for off.
	for _, tt := range []struct {
		args          []string
		body, stopped time.Duration
	}{
		{[]string{"--http"}, mcp.DefaultBodyTimeout, defaultStoppedLimit},
		{[]string{"--http", "--body-timeout", "2m", "--stopped-limit", "1m30s"}, 2 * time.Minute, 90 * time.Second},
		{[]string{"--http", "--body-timeout=0", "--stopped-limit", "0"}, 0, 0},
		{[]string{"--stopped-limit", "1s"}, mcp.DefaultBodyTimeout, time.Second},
	} {
		m = nil
		if err := parse(t, NewCmdMCP(testEnv(), func(o *MCPOptions) error { m = o; return nil }), tt.args...); err != nil ||
			m.bodyTimeout != tt.body || m.stopped.limit != tt.stopped {
			t.Errorf("lcp mcp %q: %+v, %v; want --body-timeout %s --stopped-limit %s", tt.args, m, err, tt.body, tt.stopped)
		}
	}
	for _, tt := range []struct {
		limit time.Duration
		want  time.Duration // lcp.Config.StoppedLimit
	}{{defaultStoppedLimit, defaultStoppedLimit}, {time.Minute, time.Minute}, {0, -1}} {
		var cfg lcp.Config
		(&stoppedFlags{limit: tt.limit}).configure(&cfg)
		if cfg.StoppedLimit != tt.want {
			t.Errorf("--stopped-limit %s: Config.StoppedLimit = %s, want %s", tt.limit, cfg.StoppedLimit, tt.want)
		}
	}
	if err := parse(t, NewCmdMCP(testEnv(), func(o *MCPOptions) error { m = o; return nil }), "--http", "127.0.0.1:0", "--no-token", "--replica-id", "r1", "--json-response"); err != nil ||
		!m.noToken || m.replicaID != "r1" || !m.jsonResponse || m.drain.timeout != 30*time.Second || m.maxSessions != mcp.DefaultMaxSessions {
		t.Errorf("mcp options %+v, %v", m, err)
	}
	if err := parse(t, NewCmdMCP(testEnv(), func(o *MCPOptions) error { m = o; return nil })); err != nil || m.useHTTP || m.watch.watch {
		t.Errorf("stdio: %+v, %v", m, err)
	}
	// --http alone is the default address; ADDR after a space or an =.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--http"}, mcp.DefaultAddr},
		{[]string{"--http", "--watch"}, mcp.DefaultAddr},
		{[]string{"--watch", "--http"}, mcp.DefaultAddr},
		{[]string{"--http", "127.0.0.1:9000", "--watch"}, "127.0.0.1:9000"},
		{[]string{"--http=:9000"}, ":9000"},
		{[]string{"--http", "[::1]:9000"}, "[::1]:9000"},
	} {
		m = nil
		if err := parse(t, NewCmdMCP(testEnv(), func(o *MCPOptions) error { m = o; return nil }), tt.args...); err != nil || !m.useHTTP || m.http != tt.want {
			t.Errorf("lcp mcp %q: %+v, %v; want --http %s", tt.args, m, err, tt.want)
		}
	}
	if err := parse(t, NewCmdMCP(testEnv(), func(*MCPOptions) error { t.Error("ran"); return nil }), "--http", "localhost"); ExitCode(err) != ExitUsage {
		t.Errorf("--http localhost (no port): %v, want a usage error", err)
	}

	var s *ServeOptions
	if err := parse(t, NewCmdServe(testEnv(), func(o *ServeOptions) error { s = o; return nil }),
		"--addr", "0.0.0.0:8080", "--open", "--allow-remote", "--token", "t", "--approve", "reject", "--verbose", "--watch", "--builtins",
		"--drain-timeout", "1m", "--log-format", "json", "--stopped-limit", "20s"); err != nil {
		t.Fatal(err)
	}
	if s.addr != "0.0.0.0:8080" || !s.open || !s.allowRemote || s.token != "t" || s.approval.approve != "reject" || !s.log.verbose ||
		!s.watch.watch || !s.inv.builtins || s.drain.timeout != time.Minute || s.log.format != "json" || s.stopped.limit != 20*time.Second {
		t.Errorf("serve options %+v", s)
	}
	if err := parse(t, NewCmdServe(testEnv(), nil), "--yes"); ExitCode(err) != ExitUsage {
		t.Errorf("serve has no --yes: %v", err)
	}
	for _, c := range []*cobra.Command{NewCmdList(testEnv(), nil), NewCmdCheck(testEnv(), nil), NewCmdCall(testEnv(), nil)} {
		if err := parse(t, c, "--watch"); ExitCode(err) != ExitUsage {
			t.Errorf("%s has no --watch: %v", c.Name(), err)
		}
	}
}

func TestChatFlags(t *testing.T) {
	var c *ChatOptions
	if err := parse(t, NewCmdChat(testEnv(), func(o *ChatOptions) error { c = o; return nil }),
		"--model", "http://m/v1#x", "--model-name", "x", "--system", "sys", "--prompt", "hi", "--max-steps", "3", "--max-tokens", "99",
		"--temperature", "0.5", "--llm-timeout", "5s", "--stream", "--approve", "allow", "--watch", "--precise"); err != nil {
		t.Fatal(err)
	}
	if c.model != "http://m/v1#x" || c.modelName != "x" || c.system != "sys" || c.prompt != "hi" || c.maxSteps != 3 || c.maxTokens != 99 ||
		c.temperature != 0.5 || !c.temperatureSet || c.llmTimeout != 5*time.Second || !c.stream || c.approval.approve != "allow" || !c.watch.watch || !c.inv.precise {
		t.Errorf("chat options %+v", c)
	}
	// Without --stream, streaming follows whether stdout is a terminal
	// (a buffer is not); without --temperature the server decides.
	if err := parse(t, NewCmdChat(testEnv(), func(o *ChatOptions) error { c = o; return nil })); err != nil {
		t.Fatal(err)
	}
	if c.stream || c.temperatureSet || c.system != defaultSystemPrompt || c.watch.watch {
		t.Errorf("chat defaults %+v", c)
	}
}

// fakeSignals is an Env's signal source that a test fires by hand.
type fakeSignals struct{ chans []chan<- os.Signal }

func (f *fakeSignals) notify(c chan<- os.Signal, _ ...os.Signal) { f.chans = append(f.chans, c) }
func (f *fakeSignals) stop(chan<- os.Signal)                     {}
func (f *fakeSignals) fire(sig os.Signal) {
	for _, c := range f.chans {
		select {
		case c <- sig:
		default:
		}
	}
}

// Main cancels the command on a signal from the Env, with a cause a
// command can tell apart (lcp chat keeps Ctrl-C for its turns).
func TestMainCancelsOnSignalFromEnv(t *testing.T) {
	sigs := &fakeSignals{}
	var stderr bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" },
		Notify: sigs.notify, StopNotify: sigs.stop, Args: []string{"list", "--file", "/nonexistent.py"}}
	root := NewRoot(env)
	ran := make(chan error, 1)
	for _, c := range root.Commands() {
		if c.Name() == "list" {
			c.RunE = func(cmd *cobra.Command, _ []string) error {
				sigs.fire(syscall.SIGTERM)
				<-cmd.Context().Done()
				var se *signalError
				if !errors.As(context.Cause(cmd.Context()), &se) {
					ran <- errors.New("the cause is not a signal")
				}
				ran <- nil
				return nil
			}
		}
	}
	code := run1(env, root)
	if err := <-ran; err != nil || code != 0 {
		t.Errorf("exit %d, %v (stderr %s)", code, err, stderr.String())
	}
}

// Each command lists only the inventory flags it uses.
func TestInventoryFlagsPerCommand(t *testing.T) {
	runOnly := []string{"--timeout", "1s", "--no-coerce", "--validate-args", "--llm", "http://x/v1"}
	loadOnly := []string{"--workspace", ".", "--python", "python3", "--sandbox"}
	for _, tt := range []struct {
		cmd    *cobra.Command
		reject []string
		accept []string
	}{
		{NewCmdCheck(testEnv(), func(*CheckOptions) error { return nil }), append(append([]string{}, runOnly...), loadOnly...), []string{"--autonomy", "strict", "--host-config", "h.json"}},
		{NewCmdList(testEnv(), func(*ListOptions) error { return nil }), runOnly, append([]string{"--autonomy", "safe"}, loadOnly...)},
		{NewCmdCall(testEnv(), func(*CallOptions) error { return nil }), nil, append(append([]string{"--autonomy", "full_access", "t"}, runOnly...), loadOnly...)},
	} {
		for i := 0; i < len(tt.reject); i++ {
			args := []string{tt.reject[i]}
			if i+1 < len(tt.reject) && !strings.HasPrefix(tt.reject[i+1], "--") {
				args = append(args, tt.reject[i+1])
				i++
			}
			if err := parse(t, tt.cmd, args...); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "unknown flag") {
				t.Errorf("lcp %s %v: %v, want an unknown flag", tt.cmd.Name(), args, err)
			}
		}
		if err := parse(t, tt.cmd, tt.accept...); err != nil {
			t.Errorf("lcp %s %v: %v", tt.cmd.Name(), tt.accept, err)
		}
	}
}

func TestApplyAutonomy(t *testing.T) {
	got := applyAutonomy(map[string]map[string]any{
		"system_shell":   {"autonomy_level": "safe", "timeout": 5.0},
		"execute_python": {"python": "py3"},
		"my_lib":         {"x": 1.0},
	}, "strict")
	want := map[string]map[string]any{
		"system_shell":           {"autonomy_level": "safe", "timeout": 5.0}, // an explicit level wins
		"execute_python":         {"python": "py3", "autonomy_level": "strict"},
		"workspace_tools":        {"autonomy_level": "strict"},
		"user_interactive_tools": {"autonomy_level": "strict"},
		"user_interaction_demo":  {"autonomy_level": "strict"},
		"my_lib":                 {"x": 1.0}, // the user's libraries keep theirs
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// Every command's help has an Examples section, in the shape gh uses.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		n++
		if !strings.Contains(c.Example, "$ lcp ") {
			t.Errorf("lcp %s has no examples", c.CommandPath())
		}
		var help bytes.Buffer
		c.SetOut(&help)
		_ = c.Help()
		if !strings.Contains(help.String(), "\nExamples:\n") {
			t.Errorf("%s --help has no Examples: section", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot(testEnv()))
	if n < 13 {
		t.Errorf("only %d commands", n)
	}
}
