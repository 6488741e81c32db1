package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lcptools/lcp/tool"
)

// The tests in this file drive real MCP peers from the npm registry: the
// reference server (server-everything), the TypeScript SDK's client and the
// inspector CLI. They need `npm ci` in testdata/node and are skipped
// without it.

const nodeDir = "testdata/node"

func needNode(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir, err := filepath.Abs(nodeDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("the npm peers are not installed: run `npm ci` in mcp/testdata/node")
	}
	return dir
}

// runNode runs a node program in the peers folder and returns its stdout.
func runNode(t *testing.T, dir string, timeout time.Duration, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstderr:\n%s\nstdout:\n%s", args[0], err, stderr.Bytes(), stdout.Bytes())
	}
	return stdout.Bytes()
}

type tsText struct {
	IsError    bool            `json:"isError"`
	Text       string          `json:"text"`
	Structured json.RawMessage `json:"structured"`
}

type tsOutput struct {
	Tools             []string          `json:"tools"`
	EchoSchema        json.RawMessage   `json:"echoSchema"`
	GreetOutputSchema json.RawMessage   `json:"greetOutputSchema"`
	Greet, Fail       tsText            `json:"-"`
	Results           map[string]tsText `json:"-"`
	Asked             []map[string]any  `json:"asked"`
	Cancel            string            `json:"cancel"`
	Progress          int               `json:"progress"`
	Sessions          [][]string        `json:"sessions"`
	SessionAsked      []int             `json:"sessionAsked"`
	Sampled           []struct {
		Text         string `json:"text"`
		MaxTokens    int    `json:"maxTokens"`
		SystemPrompt string `json:"systemPrompt"`
	} `json:"sampled"`
}

func TestTypeScriptClientDrivesLCPServer(t *testing.T) {
	dir := needNode(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, nil)
	targets := map[string]any{
		"stdio": map[string]any{"command": exe, "args": []string{"-test.run=^$", testServerArg}},
		"http":  map[string]any{"url": serveHTTP(t, srv, nil) + "/mcp"},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			slowStarted.reset()
			slowCancelled.reset()
			arg, _ := json.Marshal(target)
			raw := runNode(t, dir, 60*time.Second, "ts_client.mjs", string(arg))
			var out tsOutput
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatalf("%v: %s", err, raw)
			}
			var results map[string]json.RawMessage
			_ = json.Unmarshal(raw, &results)
			get := func(k string) tsText {
				var x tsText
				if err := json.Unmarshal(results[k], &x); err != nil {
					t.Fatalf("%s: %v", k, err)
				}
				return x
			}

			for _, want := range []string{"greet", "echo", "danger", "pick", "login", "slow"} {
				if !strings.Contains(strings.Join(out.Tools, ","), want) {
					t.Errorf("tools = %v, want %s", out.Tools, want)
				}
			}
			if got, want := string(out.EchoSchema), `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`; got != want {
				t.Errorf("echo schema = %s\nwant %s", got, want)
			}
			if len(out.GreetOutputSchema) == 0 || string(out.GreetOutputSchema) == "null" {
				t.Error("greet has no output schema")
			}
			checks := []struct {
				key   string
				want  string
				isErr bool
			}{
				{"greet", `{"greeting":"Hello, Ada!"}`, false},
				{"fail", "it broke", true},
				{"allow", "deleted (allow)", false},
				{"reject", "rejected: not on a Friday", true},
				{"pick", "picked blue", false},
				{"login", "key of 12 characters accepted", false},
				{"sampling", "Lighthouse", false},
			}
			for _, c := range checks {
				got := get(c.key)
				if got.Text != c.want || got.IsError != c.isErr {
					t.Errorf("%s = %+v, want %q (isError %v)", c.key, got, c.want, c.isErr)
				}
			}
			if s := get("greet").Structured; string(s) != `{"greeting":"Hello, Ada!"}` {
				t.Errorf("greet structured = %s", s)
			}
			// What the client was asked: two confirmations, a select, then
			// the URL of lcp's secret page, which shows a masked field.
			if len(out.Asked) != 5 {
				t.Fatalf("asked = %v", out.Asked)
			}
			if out.Asked[3]["mode"] != "url" || !strings.HasPrefix(fmt.Sprint(out.Asked[3]["url"]), "http://127.0.0.1:") || out.Asked[4]["page"] != "masked field" {
				t.Errorf("secret request = %v, %v", out.Asked[3], out.Asked[4])
			}
			if b, _ := json.Marshal(out.Asked); bytes.Contains(b, []byte("s3cret")) {
				t.Errorf("the secret went through the client: %s", b)
			}
			// The tool asked the client's model, with its options.
			if len(out.Sampled) != 1 || out.Sampled[0].Text != "What guides ships at night?" || out.Sampled[0].MaxTokens != 40 || out.Sampled[0].SystemPrompt != "Answer in one word." {
				t.Errorf("sampling requests = %+v", out.Sampled)
			}
			if out.Cancel != "aborted" {
				t.Errorf("cancel = %q", out.Cancel)
			}
			if out.Progress < 3 {
				t.Errorf("%d progress notifications", out.Progress)
			}
			want := [][]string{{"hello Ada", "hello Ada", "hello Ada"}, {"hello Bob", "hello Bob", "hello Bob"}}
			if fmt.Sprint(out.Sessions) != fmt.Sprint(want) || fmt.Sprint(out.SessionAsked) != "[3 3]" {
				t.Errorf("sessions = %v asked %v", out.Sessions, out.SessionAsked)
			}
			if name == "http" {
				slowCancelled.wait(t, 5*time.Second) // the abort reached the tool
			}
		})
	}
}

func TestInspectorCLIDrivesLCPServer(t *testing.T) {
	dir := needNode(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The CLI looks for its package.json relative to the working directory.
	cliDir := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	srv := newTestServer(t, nil)
	targets := map[string][]string{
		"stdio": {exe, "-test.run=^$", testServerArg},
		"http":  {serveHTTP(t, srv, nil) + "/mcp", "--transport", "http"},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			run := func(args ...string) map[string]any {
				t.Helper()
				raw := runNode(t, cliDir, 60*time.Second, append(append([]string{"index.js"}, target...), args...)...)
				var m map[string]any
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatalf("%v: %s", err, raw)
				}
				return m
			}
			list := run("--method", "tools/list")
			b, _ := json.Marshal(list)
			if !bytes.Contains(b, []byte(`"name":"greet"`)) || !bytes.Contains(b, []byte(`"name":"danger"`)) {
				t.Errorf("tools/list = %s", b)
			}
			res := run("--method", "tools/call", "--tool-name", "greet", "--tool-arg", "name=Ada")
			b, _ = json.Marshal(res)
			if !bytes.Contains(b, []byte(`Hello, Ada!`)) {
				t.Errorf("greet = %s", b)
			}
			// The inspector CLI cannot answer elicitation: the default
			// policy rejects, saying why.
			res = run("--method", "tools/call", "--tool-name", "danger")
			b, _ = json.Marshal(res)
			if res["isError"] != true || !bytes.Contains(b, []byte("does not support elicitation")) {
				t.Errorf("danger = %s", b)
			}
		})
	}
}

// freePort returns a loopback port nobody listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// everything starts the reference server over streamable HTTP and returns
// its URL.
func everythingHTTP(t *testing.T, dir string) string {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command("node", filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr + "/mcp"
}

func TestClientOfServerEverything(t *testing.T) {
	dir := needNode(t)
	script := filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	configs := map[string]ServerConfig{
		"stdio": {Alias: "everything", Command: "node", Args: []string{script, "stdio"}, Sandbox: &SandboxConfig{Read: []string{dir}}},
		"http":  {Alias: "everything", URL: everythingHTTP(t, dir)},
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			var progress atomic.Int32
			c := newClient(t, []ServerConfig{cfg}, &ClientOptions{OnEvent: func(p tool.Event) {
				if p.Tool == "everything::trigger-long-running-operation" && p.Total == 3 {
					progress.Add(1)
				}
			}})
			if d := c.Diagnostics(); len(d) > 0 {
				t.Fatal(d)
			}
			ctx := context.Background()
			infos, err := c.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, i := range infos {
				names[i.Name] = true
			}
			for _, want := range []string{"everything::echo", "everything::get-structured-content", "everything::trigger-elicitation-request", "everything::trigger-long-running-operation"} {
				if !names[want] {
					t.Errorf("no %s in %v", want, names)
				}
			}

			res, err := tool.Call(ctx, c, "everything::echo", json.RawMessage(`{"message":"hi"}`), nil)
			if err != nil || !res.Success || res.Text() != "Echo: hi" {
				t.Errorf("echo = %+v, %v", res, err)
			}

			res, err = tool.Call(ctx, c, "everything::echo", json.RawMessage(`{}`), nil)
			if err != nil || res.Success || res.StatusCode != 500 || !strings.Contains(strings.ToLower(res.Error), "message") {
				t.Errorf("echo without a message = %+v, %v", res, err)
			}

			res, err = tool.Call(ctx, c, "everything::get-structured-content", json.RawMessage(`{"location":"Chicago"}`), nil)
			if err != nil || !res.Success {
				t.Fatalf("structured = %+v, %v", res, err)
			}
			var weather struct {
				Temperature float64 `json:"temperature"`
				Conditions  string  `json:"conditions"`
			}
			if err := json.Unmarshal(res.Structured, &weather); err != nil || weather.Temperature != 36 || weather.Conditions == "" {
				t.Errorf("structured = %s", res.Structured)
			}

			res, err = tool.Call(ctx, c, "everything::get-tiny-image", nil, nil)
			if err != nil {
				t.Fatalf("tiny image: %v", err)
			}
			// The result's blocks, in order: text, the image, text.
			var img *tool.Content
			for i := range res.Content {
				if res.Content[i].Type == tool.ContentImage {
					img = &res.Content[i]
					break
				}
			}
			if img == nil || img.MIMEType != "image/png" || len(img.Data) == 0 || res.Content[0].Type != tool.ContentText {
				t.Errorf("tiny image: %d blocks, output %s", len(res.Content), res.Output)
			}

			res, err = tool.Call(ctx, c, "everything::trigger-long-running-operation", json.RawMessage(`{"duration":0.3,"steps":3}`), nil)
			if err != nil || !res.Success {
				t.Errorf("long operation = %+v, %v", res, err)
			}
			if !eventually(func() bool { return progress.Load() == 3 }) {
				t.Errorf("%d progress notifications, want 3", progress.Load())
			}

			// The server's elicitation reaches the caller as a form request.
			var asked *tool.Request
			res, err = tool.Call(ctx, c, "everything::trigger-elicitation-request", nil, &tool.CallOptions{
				Interact: func(ctx context.Context, r *tool.Request) (any, bool) {
					asked = r
					return map[string]any{"name": "Ada Lovelace", "check": true}, true
				},
			})
			if err != nil || !res.Success || !strings.Contains(res.Text(), "Name: Ada Lovelace") {
				t.Errorf("elicitation = %+v, %v", res, err)
			}
			if asked == nil || asked.Kind != tool.KindForm || asked.Tool != "everything::trigger-elicitation-request" || !bytes.Contains(asked.Schema, []byte(`"untitledSingleSelectEnum"`)) {
				t.Errorf("request = %+v", asked)
			}

			// A declined elicitation is the server's business.
			res, err = tool.Call(ctx, c, "everything::trigger-elicitation-request", nil, nil)
			if err != nil || !strings.Contains(res.Text(), "declined") {
				t.Errorf("declined elicitation = %+v, %v", res, err)
			}

			// The server's prompts are the inventory's, named like its tools.
			prompts, err := c.Prompts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var pnames []string
			for _, p := range prompts {
				pnames = append(pnames, p.Name)
			}
			if !slices.Contains(pnames, "everything::args-prompt") || !slices.Contains(pnames, "everything::completable-prompt") {
				t.Errorf("prompts = %v", pnames)
			}
			got, err := c.GetPrompt(ctx, "everything::args-prompt", map[string]string{"city": "Lyon"})
			if err != nil || len(got.Messages) != 1 || got.Messages[0].Content.Text != "What's weather in Lyon?" {
				t.Errorf("args-prompt = %+v, %v", got, err)
			}
			var missing *tool.PromptArgumentsError
			if _, err := c.GetPrompt(ctx, "everything::args-prompt", nil); !errors.As(err, &missing) {
				t.Errorf("args-prompt without its city: %v", err)
			}
			values, err := c.CompletePrompt(ctx, "everything::completable-prompt", "name", "", map[string]string{"department": "Sales"})
			if err != nil || !slices.Equal(values, []string{"David", "Eve", "Frank"}) {
				t.Errorf("completion = %v, %v", values, err)
			}

			_, err = tool.Call(ctx, c, "everything::no-such-tool", nil, nil)
			var unknown *tool.UnknownToolError
			if !errors.As(err, &unknown) {
				t.Errorf("unknown tool: %v", err)
			}
		})
	}
}
