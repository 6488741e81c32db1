//go:build unix

package term_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	xterm "golang.org/x/term"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/hitl/term"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/tool"
)

// The terminal front end is tested as users meet it: the test binary runs
// itself as a child whose stdin and stderr are a real pseudo-terminal, and
// plays the person at the other end by reading the screen and typing keys.

// scenario is what the child does: put requests to the terminal through a
// broker and report the answers on stdout, one JSON line each.
type scenario struct {
	Requests     []*tool.Request `json:"requests"`
	Concurrent   bool            `json:"concurrent"`
	ConfirmLimit time.Duration   `json:"confirm_limit"`
	// WaitGo makes the child wait for a byte on file descriptor 3 before
	// asking, so that the test can type ahead of the prompt.
	WaitGo bool `json:"wait_go"`
	// Emitted is a file that gets everything the broker emits: its log
	// records and its events.
	Emitted string `json:"emitted"`
	// Secret is the value a secret answer must have; the child reports
	// whether it matched, never the value.
	Secret string `json:"secret"`
	// OpenTTY makes the child ask on /dev/tty rather than on its stdin.
	OpenTTY bool `json:"open_tty"`
	// MCPForm, when set, makes the child call a tool of an MCP server that
	// asks for this form (elicitation), through lcp's MCP client, and
	// report what the server got.
	MCPForm json.RawMessage `json:"mcp_form,omitempty"`
}

// line is one line of the child's report.
type line struct {
	Kind     string `json:"kind"` // result, pending, restored
	ID       string `json:"id,omitempty"`
	Action   string `json:"action,omitempty"`
	Value    any    `json:"value,omitempty"`
	Reason   string `json:"reason,omitempty"`
	SecretOK bool   `json:"secret_ok,omitempty"`
	N        int    `json:"n,omitempty"`
	OK       bool   `json:"ok,omitempty"`
}

const helperEnv = "LCP_HITL_TERM_SCENARIO"

func TestMain(m *testing.M) {
	if s := os.Getenv(helperEnv); s != "" {
		os.Exit(child(s))
	}
	os.Exit(m.Run())
}

// child runs a scenario on the terminal it was given as stdin.
func child(spec string) int {
	var sc scenario
	if err := json.Unmarshal([]byte(spec), &sc); err != nil {
		fmt.Fprintln(os.Stdout, "bad scenario:", err)
		return 2
	}
	emitted, err := os.Create(sc.Emitted)
	if err != nil {
		fmt.Fprintln(os.Stdout, err)
		return 2
	}
	defer emitted.Close()
	var emu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&emu, emitted}, &slog.HandlerOptions{Level: slog.LevelDebug}))

	before, err := xterm.GetState(0)
	if err != nil {
		fmt.Fprintln(os.Stdout, "stdin is not a terminal:", err)
		return 2
	}
	in, screen := os.Stdin, os.Stderr
	if sc.OpenTTY {
		tty, err := term.OpenTTY()
		if err != nil {
			fmt.Fprintln(os.Stdout, err)
			return 2
		}
		defer tty.Close()
		in, screen = tty, tty
	}
	t := term.New(in, screen)
	defer t.Close()
	b := hitl.New(t, &hitl.Options{Logger: logger, ConfirmLimit: sc.ConfirmLimit})
	sub := b.Subscribe(256)
	out := json.NewEncoder(os.Stdout)
	var omu sync.Mutex
	report := func(l line) {
		omu.Lock()
		defer omu.Unlock()
		_ = out.Encode(l)
	}
	events := make(chan struct{})
	go func() {
		defer close(events)
		for ev := range sub.Events() {
			data, _ := json.Marshal(ev)
			emu.Lock()
			emitted.Write(append(data, '\n'))
			emu.Unlock()
			if ev.Type == hitl.EventOpened {
				report(line{Kind: "pending", N: len(b.Pending())})
			}
		}
	}()

	if sc.WaitGo {
		var one [1]byte
		_, _ = os.NewFile(3, "go").Read(one[:])
	}
	if len(sc.MCPForm) > 0 && string(sc.MCPForm) != "null" {
		report(askThroughMCP(b, sc.MCPForm))
		b.Close()
		<-events
		after, err := xterm.GetState(0)
		report(line{Kind: "restored", OK: err == nil && reflect.DeepEqual(before, after)})
		return 0
	}
	ask := func(r *tool.Request) {
		resp := b.Respond(context.Background(), r)
		l := line{Kind: "result", ID: r.ID, Action: string(resp.Action), Value: resp.Value, Reason: resp.Reason}
		if r.Kind == tool.KindSecret && resp.Value != nil {
			l.Value, l.SecretOK = nil, resp.Value == sc.Secret
		}
		report(l)
	}
	var wg sync.WaitGroup
	for _, r := range sc.Requests {
		if sc.Concurrent {
			wg.Go(func() { ask(r) })
		} else {
			ask(r)
		}
	}
	wg.Wait()
	b.Close()
	<-events
	after, err := xterm.GetState(0)
	report(line{Kind: "restored", OK: err == nil && reflect.DeepEqual(before, after)})
	return 0
}

// askThroughMCP serves an MCP server whose tool asks for form, calls it
// through lcp's MCP client with the broker answering, and returns what
// the server got as a result line.
func askThroughMCP(b *hitl.Broker, form json.RawMessage) line {
	server := sdk.NewServer(&sdk.Implementation{Name: "forms", Version: "1"}, nil)
	server.AddTool(&sdk.Tool{Name: "fill", Description: "Asks for a form.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your profile", RequestedSchema: form})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
			}
			got, _ := json.Marshal(map[string]any{"action": res.Action, "content": res.Content})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(got)}}}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	c, err := mcp.NewClientToolset(ctx, []mcp.ServerConfig{{Alias: "forms", Type: mcp.TypeHTTP, URL: hs.URL}}, nil)
	if err != nil {
		return line{Kind: "result", Reason: err.Error()}
	}
	defer c.Close()
	res, err := tool.Call(ctx, c, "forms::fill", nil, &tool.CallOptions{Respond: b.Respond})
	if err != nil {
		return line{Kind: "result", Reason: err.Error()}
	}
	if !res.Success {
		return line{Kind: "result", Reason: res.Error}
	}
	var got struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal([]byte(res.Text()), &got); err != nil {
		return line{Kind: "result", Reason: res.Text()}
	}
	return line{Kind: "result", Action: got.Action, Value: got.Content}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// session is a running child and the screen it draws.
type session struct {
	t       *testing.T
	ptmx    *os.File
	cmd     *exec.Cmd
	go_     *os.File
	emitted string

	mu     sync.Mutex
	screen bytes.Buffer // everything written to the terminal
	mark   int          // what expect has consumed
	grew   chan struct{}

	lines chan line
}

// start runs sc in a child on a new pseudo-terminal.
func start(t *testing.T, sc scenario) *session {
	t.Helper()
	reqs := make([]*tool.Request, len(sc.Requests))
	for i, r := range sc.Requests {
		c := *r // requests are shared between parallel tests
		c.ID = tool.NewID()
		if c.Tool == "" {
			c.Tool = "tool_demo"
		}
		reqs[i] = &c
	}
	sc.Requests = reqs
	sc.Emitted = t.TempDir() + "/emitted.jsonl"
	spec, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// A race-enabled child would otherwise sleep a second before exiting.
	cmd.Env = append(os.Environ(), helperEnv+"="+string(spec), "GORACE=atexit_sleep_ms=0")
	cmd.Stdin, cmd.Stderr, cmd.Stdout = tty, tty, outW
	cmd.ExtraFiles = []*os.File{goR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	goR.Close()
	outW.Close()
	s := &session{t: t, ptmx: ptmx, cmd: cmd, go_: goW, emitted: sc.Emitted, grew: make(chan struct{}, 1), lines: make(chan line, 64)}
	go s.readScreen()
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var l line
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				l = line{Kind: "garbage: " + sc.Text()}
			}
			s.lines <- l
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		ptmx.Close()
		goW.Close()
	})
	return s
}

func (s *session) readScreen() {
	buf := make([]byte, 4096)
	for {
		n, err := s.ptmx.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.screen.Write(buf[:n])
			s.mu.Unlock()
			select {
			case s.grew <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// hang bounds every wait on the child: it guards against a test hanging,
// it does not measure speed.
const hang = 20 * time.Second

// expect waits until text appears on the screen after what earlier
// expects consumed, and consumes up to its end.
func (s *session) expect(text string) {
	s.t.Helper()
	deadline := time.After(hang)
	for {
		s.mu.Lock()
		rest := s.screen.String()[s.mark:]
		if i := strings.Index(rest, text); i >= 0 {
			s.mark += i + len(text)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		select {
		case <-s.grew:
		case <-deadline:
			s.t.Fatalf("%q never appeared on the screen; it shows:\n%s", text, s.all())
		}
	}
}

// all returns the whole screen transcript.
func (s *session) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.String()
}

// send types keys.
func (s *session) send(keys string) {
	s.t.Helper()
	if _, err := s.ptmx.Write([]byte(keys)); err != nil {
		s.t.Fatal(err)
	}
}

// next returns the child's next report line of the given kind.
func (s *session) next(kind string) line {
	s.t.Helper()
	timeout := time.After(hang)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("the child ended without a %s line; screen:\n%s", kind, s.all())
			}
			if strings.HasPrefix(l.Kind, "garbage") {
				s.t.Fatalf("child wrote %s", l.Kind)
			}
			if l.Kind == kind {
				return l
			}
		case <-timeout:
			s.t.Fatalf("no %s line from the child; screen:\n%s", kind, s.all())
		}
	}
}

// finish waits for the child to end and checks it restored the terminal;
// it returns the screen and everything the broker emitted.
func (s *session) finish() (screen, emitted string) {
	s.t.Helper()
	if l := s.next("restored"); !l.OK {
		s.t.Errorf("the terminal was not restored to its state before the prompts")
	}
	if err := s.cmd.Wait(); err != nil {
		s.t.Errorf("child: %v", err)
	}
	data, err := os.ReadFile(s.emitted)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.all(), string(data)
}

func checkResult(t *testing.T, l line, action tool.Action, value any, reason string) {
	t.Helper()
	if l.Action != string(action) || !reflect.DeepEqual(l.Value, value) || l.Reason != reason {
		t.Errorf("answer %s %v %q, want %s %v %q", l.Action, l.Value, l.Reason, action, value, reason)
	}
}

func confirm(label string) *tool.Request {
	return &tool.Request{Kind: tool.KindConfirm, Library: "user_interaction_demo", Label: label, Title: label,
		Source: "prepare_deployment(action=deploy, target=production)"}
}

var strategy = &tool.Request{Kind: tool.KindSelect, Title: "Deployment strategy for production",
	Prompt: "Choose how the service should be rolled out:", Options: []string{"blue-green", "rolling", "canary"}, Default: ptr("canary")}

func TestPTYApprove(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{confirm("deploy:production")}})
	s.expect("APPROVAL REQUIRED: deploy:production")
	s.expect("prepare_deployment(action=deploy, target=production)")
	s.expect("[y]es / [n]o / [a]lways: ")
	s.send("\r") // an empty answer is not an approval
	s.expect("Please answer")
	s.expect("[a]lways: ")
	s.send("y\r")
	checkResult(t, s.next("result"), tool.Submit, "allow", "")
	s.finish()
}

// A confirmation takes one key, as a select does: no Enter, either case;
// another key asks again, and the Enter of a "y" and Enter habit answers
// nothing.
func TestPTYApproveOneKey(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{confirm("deploy:production"), confirm("deploy:staging"), confirm("deploy:qa")}})
	s.expect("[a]lways: ")
	s.send("x")
	s.expect("?")
	s.expect("Please answer")
	s.expect("[a]lways: ")
	s.send("Y")
	checkResult(t, s.next("result"), tool.Submit, "allow", "")
	s.expect("deploy:staging")
	s.expect("[a]lways: ")
	s.send("a")
	checkResult(t, s.next("result"), tool.Submit, "always", "")
	s.expect("deploy:qa")
	s.expect("[a]lways: ")
	s.send("n")
	s.expect("Optional feedback for the agent: ")
	s.send("not now\r")
	checkResult(t, s.next("result"), tool.Decline, nil, "not now")
	s.finish()
}

func TestPTYRejectWithFeedback(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{confirm("deploy:production"), confirm("deploy:staging")}})
	s.expect("[a]lways: ")
	s.send("n\r")
	s.expect("Optional feedback for the agent: ")
	s.send("not on a Friday\r")
	checkResult(t, s.next("result"), tool.Decline, nil, "not on a Friday")
	s.expect("[a]lways: ")
	s.send("no\r")
	s.expect("feedback for the agent: ")
	s.send("\r")
	checkResult(t, s.next("result"), tool.Decline, nil, term.Declined)
	s.finish()
}

func TestPTYAlways(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{confirm("deploy:production"), confirm("deploy:production"), confirm("deploy:staging")}})
	s.expect("[a]lways: ")
	s.send("a\r")
	checkResult(t, s.next("result"), tool.Submit, "always", "")
	checkResult(t, s.next("result"), tool.Submit, "always", "") // not shown
	s.expect("APPROVAL REQUIRED: deploy:staging")               // another label is
	s.expect("[a]lways: ")
	s.send("y\r")
	checkResult(t, s.next("result"), tool.Submit, "allow", "")
	screen, _ := s.finish()
	if n := strings.Count(screen, "APPROVAL REQUIRED: deploy:production"); n != 1 {
		t.Errorf("the production prompt was shown %d times, want once", n)
	}
}

func TestPTYSecretNeverShown(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-TOPSECRET-4242"
	r := &tool.Request{Kind: tool.KindSecret, Title: "Registry credentials", Prompt: "Enter the API key for the 'production' registry:"}
	s := start(t, scenario{Requests: []*tool.Request{r, {Kind: tool.KindSecret, Title: "Again"}}, Secret: secret})
	s.expect("(typing is hidden)")
	s.expect("> ")
	s.send(secret[:5])
	s.send("X\x7f") // a typo, erased
	s.send(secret[5:] + "\r")
	l := s.next("result")
	if l.Action != "submit" || !l.SecretOK {
		t.Errorf("got %+v, want the secret submitted intact", l)
	}
	s.expect("Again")
	s.expect("> ")
	s.send("\r") // empty: declined, as getpass's empty answer
	checkResult(t, s.next("result"), tool.Decline, nil, term.QuestionCancelled)
	screen, emitted := s.finish()
	for _, part := range []string{secret, secret[:5], secret[5:], "*****"} {
		if strings.Contains(screen, part) {
			t.Errorf("the screen shows %q:\n%s", part, screen)
		}
	}
	if strings.Contains(emitted, secret[5:]) {
		t.Errorf("the broker emitted the secret:\n%s", emitted)
	}
	if !strings.Contains(emitted, `"value":"****42"`) {
		t.Errorf("the answered event should carry the masked secret:\n%s", emitted)
	}
}

func TestPTYSelectByArrows(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{strategy, strategy, strategy}})
	s.expect("> 3. canary (default)")
	s.expect("Ctrl-C to cancel")
	s.send("\x1b[A") // up: rolling
	s.expect("> 2. rolling")
	s.send("\r")
	s.expect("Chosen: rolling")
	checkResult(t, s.next("result"), tool.Submit, "rolling", "")

	s.expect("Deployment strategy")
	s.expect("Ctrl-C to cancel")
	s.send("\x1b[B") // down from the last wraps to the first
	s.expect("> 1. blue-green")
	s.send("\x1b[B\x1b[B\x1b[B") // and round again to it
	s.send("\r")
	checkResult(t, s.next("result"), tool.Submit, "blue-green", "")

	s.expect("Chosen: blue-green")
	s.expect("Ctrl-C to cancel")
	s.send("\r") // the default
	checkResult(t, s.next("result"), tool.Submit, "canary", "")
	s.finish()
}

func TestPTYSelectByNumber(t *testing.T) {
	t.Parallel()
	many := &tool.Request{Kind: tool.KindSelect, Title: "Region"}
	for i := range 12 {
		many.Options = append(many.Options, fmt.Sprintf("region-%02d", i+1))
	}
	s := start(t, scenario{Requests: []*tool.Request{strategy, many}})
	s.expect("Ctrl-C to cancel")
	s.send("1")
	s.expect("> 1. blue-green")
	s.send("\r")
	checkResult(t, s.next("result"), tool.Submit, "blue-green", "")
	s.expect("Region")
	s.expect("Ctrl-C to cancel")
	s.send("12") // two digits for the twelfth option
	s.expect("> 12. region-12")
	s.send("\r")
	checkResult(t, s.next("result"), tool.Submit, "region-12", "")
	s.finish()
}

func TestPTYCtrlC(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{
		confirm("deploy:production"), strategy,
		{Kind: tool.KindSecret, Title: "Key"}, {Kind: tool.KindText, Title: "Tag", Default: ptr("latest")},
	}})
	s.expect("[a]lways: ")
	s.send("\x03")
	checkResult(t, s.next("result"), tool.Decline, nil, term.Cancelled)
	s.expect("Ctrl-C to cancel")
	s.send("\x03")
	checkResult(t, s.next("result"), tool.Decline, nil, term.QuestionCancelled)
	s.expect("(typing is hidden)")
	s.send("abc\x03")
	checkResult(t, s.next("result"), tool.Decline, nil, term.QuestionCancelled)
	s.expect("Tag")
	s.send("\x03") // a default is not taken on Ctrl-C
	checkResult(t, s.next("result"), tool.Decline, nil, term.QuestionCancelled)
	s.finish()
}

func TestPTYEOF(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{confirm("x"), {Kind: tool.KindText, Title: "Tag"}, strategy}})
	s.expect("[a]lways: ")
	s.send("\x04")
	checkResult(t, s.next("result"), tool.Decline, nil, term.Cancelled)
	s.expect("Tag")
	s.expect("> ")
	s.send("\x04")
	checkResult(t, s.next("result"), tool.Decline, nil, term.QuestionCancelled)
	s.expect("Ctrl-C to cancel")
	s.send("\x04")
	checkResult(t, s.next("result"), tool.Decline, nil, term.QuestionCancelled)
	s.finish()
}

func TestPTYText(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{
		{Kind: tool.KindText, Title: "First tag", Prompt: "Which image tag should be deployed?", Default: ptr("latest")},
		{Kind: tool.KindText, Title: "Second tag", Default: ptr("latest")},
		{Kind: tool.KindText, Title: "Notes", Multiline: true},
	}})
	s.expect("Which image tag should be deployed?")
	s.expect("(Enter for the default: latest)")
	s.expect("> ")
	s.send("\r")
	checkResult(t, s.next("result"), tool.Submit, "latest", "")
	s.expect("Second tag")
	s.expect("> ")
	s.send("v1.3\x7f4\r")
	checkResult(t, s.next("result"), tool.Submit, "v1.4", "")
	s.expect("Ctrl-D to finish")
	s.send("first line\rsecond line\r\x04")
	checkResult(t, s.next("result"), tool.Submit, "first line\nsecond line", "")
	s.finish()
}

// A host whose stdin is not the terminal asks on /dev/tty.
func TestPTYOpenTTY(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{confirm("deploy:production")}, OpenTTY: true})
	s.expect("[a]lways: ")
	s.send("y\r")
	checkResult(t, s.next("result"), tool.Submit, "allow", "")
	s.finish()
}

// Two calls ask at once: the terminal shows one request, then the other,
// never both.
func TestPTYConcurrentRequestsTakeTurns(t *testing.T) {
	t.Parallel()
	a, b := confirm("deploy:a"), confirm("deploy:b")
	s := start(t, scenario{Requests: []*tool.Request{a, b}, Concurrent: true})
	s.expect("[a]lways: ")
	for s.next("pending").N != 2 {
	}
	if n := strings.Count(s.all(), "APPROVAL REQUIRED"); n != 1 {
		t.Fatalf("%d prompts on screen while both are pending, want 1:\n%s", n, s.all())
	}
	s.send("y\r")
	first := s.next("result")
	s.expect("APPROVAL REQUIRED")
	s.expect("[a]lways: ")
	s.send("n\r")
	s.expect("feedback")
	s.send("later\r")
	second := s.next("result")
	if first.Action != "submit" || second.Action != "decline" || first.ID == second.ID {
		t.Errorf("answers %+v and %+v", first, second)
	}
	s.finish()
}

// A request nobody answers times out; the prompt closes and says so.
func TestPTYTimeoutClosesThePrompt(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{confirm("deploy:production")}, ConfirmLimit: 300 * time.Millisecond})
	s.expect("[a]lways: ")
	s.send("e") // not an answer
	s.expect("?")
	s.expect("(no answer in time: the request timed out)")
	checkResult(t, s.next("result"), tool.Decline, nil, hitl.ApprovalTimedOut)
	s.finish()
}

// Keys typed before a prompt appears do not answer it.
func TestPTYTypeaheadIsDiscarded(t *testing.T) {
	t.Parallel()
	s := start(t, scenario{Requests: []*tool.Request{confirm("deploy:production")}, WaitGo: true})
	s.send("y\r")
	if _, err := s.go_.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	s.expect("[a]lways: ")
	s.send("n\r")
	s.expect("feedback")
	s.send("\r")
	checkResult(t, s.next("result"), tool.Decline, nil, term.Declined)
	s.finish()
}

// A tool cannot draw on the terminal: escape sequences and bidirectional
// overrides in what it sends are shown, not obeyed; the source is cut at
// 500 characters.
func TestPTYToolTextIsEscaped(t *testing.T) {
	t.Parallel()
	r := confirm("deploy\x1b[2J\x1b[Hsafe\u202e")
	r.Source = strings.Repeat("s", 499) + "XYZ"
	r.Argv = []string{"--force", "a b"}
	s := start(t, scenario{Requests: []*tool.Request{r}})
	s.expect(`APPROVAL REQUIRED: deploy\x1b[2J\x1b[Hsafe\u202e`)
	s.expect(strings.Repeat("s", 499) + "X...")
	s.expect(`argv: "--force" "a b"`)
	s.expect("[a]lways: ")
	s.send("y\r")
	s.next("result")
	screen, _ := s.finish()
	if strings.Contains(screen, "\x1b[2J") || strings.Contains(screen, "\u202e") || strings.Contains(screen, "XYZ") {
		t.Errorf("the screen carries the tool's raw text:\n%q", screen)
	}
}

// TestPTYAnswersAnMCPForm answers, on a real terminal, the form an MCP
// server asks through lcp's client (issue 12): defaults taken with
// Enter, an integer typed as 5, titled choices, several choices with
// Space. The server must get typed values and lists, not strings refused
// by its schema, nor a silent decline.
func TestPTYAnswersAnMCPForm(t *testing.T) {
	t.Parallel()
	form := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","default":"John Doe"},
		"age":{"type":"integer","default":30},
		"score":{"type":"number"},
		"verified":{"type":"boolean","default":true},
		"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}]},
		"legacyEnum":{"type":"string","enum":["opt1","opt2"],"enumNames":["Option One","Option Two"]},
		"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
		"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"}]}}},
		"required":["name","age"]}`)
	s := start(t, scenario{MCPForm: form})
	s.expect("(Enter for the default: John Doe) > ")
	s.send("\r")
	s.expect("(Enter for the default: 30) > ")
	s.send("5\r")
	s.expect("score")
	s.expect("> ")
	s.send("88.5\r")
	s.expect("[y/n] (Enter for the default: yes): ")
	s.send("n\r")
	s.expect("1. First Option")
	s.expect("Ctrl-C to cancel")
	s.send("\x1b[B")
	s.expect("> 2. Second Option")
	s.send("\r")
	s.expect("1. Option One")
	s.expect("Ctrl-C to cancel")
	s.send("\r")
	s.expect("[ ] 3. option3")
	s.expect("Space to choose")
	s.send(" ")
	s.expect("> [x] 1. option1")
	s.send("\x1b[B\x1b[B ")
	s.expect("> [x] 3. option3")
	s.send("\r")
	s.expect("Chosen: option1, option3")
	s.expect("[ ] 2. Second Choice")
	s.expect("Space to choose")
	s.send("2 \r")
	s.expect("Chosen: Second Choice")
	want := map[string]any{"name": "John Doe", "age": 5.0, "score": 88.5, "verified": false, "titledSingle": "value2",
		"legacyEnum": "opt1", "untitledMulti": []any{"option1", "option3"}, "titledMulti": []any{"value2"}}
	checkResult(t, s.next("result"), "accept", want, "")
	s.finish()
}
