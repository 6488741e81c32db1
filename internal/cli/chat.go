package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/agent"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/tool"
	"github.com/spf13/cobra"
)

// defaultSystemPrompt is the host's part of the system prompt of lcp chat;
// the libraries' prompts follow it.
const defaultSystemPrompt = "You are a helpful assistant. Use the tools when they help you answer the user; otherwise answer directly."

// maxChatLine bounds one line the user types.
const maxChatLine = 1 << 20

// ChatOptions are the options of lcp chat.
type ChatOptions struct {
	env *Env
	ctx context.Context

	inv         inventoryFlags
	watch       watchFlags
	approval    approvalFlags
	model       string
	modelName   string
	system      string
	prompt      string
	maxSteps    int
	maxTokens   int
	temperature float64
	// temperatureSet: --temperature was given (else the server decides).
	temperatureSet bool
	llmTimeout     time.Duration
	stream         bool
}

// NewCmdChat returns lcp chat; runF runs it (nil: runChat).
func NewCmdChat(env *Env, runF func(*ChatOptions) error) *cobra.Command {
	o := &ChatOptions{env: env}
	cmd := &cobra.Command{
		Use:   "chat --model URL[#MODEL] [--prompt TEXT]",
		Short: "Chat with an LLM that uses the tools (the agent loop)",
		Long: `Chat with a model of any OpenAI-compatible chat-completions endpoint
(llama.cpp, Ollama, vLLM, LM Studio, OpenAI...) that calls the tools.

--model names the endpoint's base URL and, after '#', the model:
  --model http://localhost:8080/v1                 (the server's only model)
  --model http://localhost:11434/v1#qwen2.5:7b
  --model https://api.openai.com/v1#gpt-4o-mini
--model-name sets the model instead of '#'. Without a model name, a server
that lists exactly one model (GET /models) gets that one. The default of
--model is $LCP_MODEL; the API key comes from $LCP_API_KEY, else
$OPENAI_API_KEY, and is never printed.

Each line you type is a turn: the answer goes to stdout, the tool calls to
stderr. /exit or end of input quits, /reset forgets the conversation. Ctrl-C
during a turn cancels the turn; at the prompt it quits. --prompt runs one
turn and exits (for scripts).

Confirmations and questions of the tools are asked on the terminal. Without
a terminal nothing is approved unless --yes or --approve=allow says so, and
questions take their default answer or are declined.`,
		Example: `  # a local llama.cpp or Ollama server
  $ lcp chat --model http://localhost:11434/v1#qwen2.5:7b

  # OpenAI, with a tools folder, one turn for a script
  $ LCP_API_KEY=sk-... lcp chat --model https://api.openai.com/v1#gpt-4o-mini \
      --tools ./my_tools --prompt "What is in notes.md?"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("stream") {
				o.stream = env.stdoutIsTerminal()
			}
			o.temperatureSet = cmd.Flags().Changed("temperature")
			o.ctx = cmd.Context()
			if runF != nil {
				return runF(o)
			}
			return runChat(o)
		},
	}
	o.inv.register(cmd.Flags(), runsTools)
	o.inv.status = env.Stderr
	o.watch.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "", "the endpoint: `URL[#MODEL]` (default $LCP_MODEL)")
	f.StringVar(&o.modelName, "model-name", "", "the model `name` (instead of URL#MODEL)")
	f.StringVar(&o.system, "system", defaultSystemPrompt, "the system `prompt` (the libraries' prompts are added)")
	f.StringVar(&o.prompt, "prompt", "", "run one turn with this `text` and exit")
	f.IntVar(&o.maxSteps, "max-steps", agent.DefaultMaxSteps, "model requests per turn at most")
	f.IntVar(&o.maxTokens, "max-tokens", 0, "bound on each answer's tokens (default: the server's)")
	f.Float64Var(&o.temperature, "temperature", 0, "sampling temperature (default: the server's)")
	f.DurationVar(&o.llmTimeout, "llm-timeout", llm.DefaultTimeout, "time limit of each model request (of each wait when streaming)")
	f.BoolVar(&o.stream, "stream", false, "stream the answers (default: on when stdout is a terminal)")
	o.approval.register(f, true, "")
	registerCompletions(cmd, &o.inv)
	return cmd
}

// client builds the model client the flags and the environment describe.
func (o *ChatOptions) client(env *Env) (*llm.Client, error) {
	spec := o.model
	if spec == "" {
		spec = env.Getenv("LCP_MODEL")
	}
	if spec == "" {
		return nil, usagef("chat needs --model URL[#MODEL] (or $LCP_MODEL), e.g. --model http://localhost:8080/v1")
	}
	base, name, err := llm.ParseEndpoint(spec)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--model: %w", err)}
	}
	if o.modelName != "" {
		if name != "" && name != o.modelName {
			return nil, usagef("--model names model %q and --model-name %q: give one", name, o.modelName)
		}
		name = o.modelName
	}
	if o.maxSteps <= 0 {
		return nil, usagef("--max-steps must be at least 1")
	}
	if o.temperatureSet && o.temperature < 0 {
		return nil, usagef("--temperature must not be negative")
	}
	return &llm.Client{BaseURL: base, Model: name, APIKey: llm.APIKeyFromEnv(env.Getenv), Timeout: o.llmTimeout}, nil
}

// pickModel fills in the model of a client without one when the server
// lists exactly one; a server that lists none or cannot list gets requests
// without a model (llama.cpp serves its own).
func pickModel(ctx context.Context, c *llm.Client) error {
	if c.Model != "" {
		return nil
	}
	ids, err := c.Models(ctx)
	if err != nil || len(ids) == 0 {
		return nil
	}
	if len(ids) == 1 {
		c.Model = ids[0]
		return nil
	}
	shown := ids
	if len(shown) > 8 {
		shown = append(shown[:8:8], "...")
	}
	return usagef("the endpoint serves several models (%s): name one with --model URL#MODEL", strings.Join(shown, ", "))
}

// chatSession is one run of lcp chat.
type chatSession struct {
	env    *Env
	o      *ChatOptions
	eng    *lcp.Engine
	client *llm.Client
	opts   *agent.Options
	conv   *agent.Conversation
	out    *chatPrinter

	mu         sync.Mutex
	cancelTurn context.CancelCauseFunc
}

var (
	errInterrupted = errors.New("interrupted")
	errTerminated  = errors.New("terminated")
)

func runChat(o *ChatOptions) error {
	env := o.env
	client, err := o.client(env)
	if err != nil {
		return err
	}
	// Ctrl-C must cancel a turn, not the program: the command's context
	// is cancelled by the first signal, so the session runs under its own
	// context and takes the signals from the Env itself.
	parent := o.ctx
	base, stopAll := context.WithCancelCause(context.WithoutCancel(parent))
	defer stopAll(nil)
	s := &chatSession{env: env, o: o, client: client, conv: agent.NewConversation()}
	stopSignals := s.handleSignals(parent, stopAll)
	defer stopSignals()

	if err := pickModel(base, client); err != nil {
		return err
	}
	// The live view shows a spinner while the model or a tool runs, and
	// what the tools print, under their call.
	live := newLive(env, false)
	live.indent = "   "
	broker, cleanup, err := terminalBroker(env, &o.approval, false, live.frontEnd)
	if err != nil {
		return err
	}
	defer cleanup()
	respond := broker.Respond
	relay := &changeRelay{}
	relay.add(func(c lcp.Change) {
		// The next request to the model lists the tools again.
		live.println("lcp chat: reloaded: " + describeChange(c))
	})
	eng, err := o.inv.engine(base, func(c *lcp.Config) {
		o.watch.configure(c, relay)
		c.Respond = respond
		// Calls run one at a time: the engine's events are the running
		// call's.
		c.OnEvent = live.event
		c.DynamicPrompts = true
		if c.LLM == nil { // --llm, when given, is what the tools use
			c.LLM = client
		}
	})
	if err != nil {
		return err
	}
	defer eng.Close()
	s.eng = eng
	s.out = &chatPrinter{env: env, stdoutTTY: env.stdoutIsTerminal(), live: live}
	s.opts = &agent.Options{
		System:    o.system,
		MaxSteps:  o.maxSteps,
		MaxTokens: o.maxTokens,
		Stream:    o.stream,
		Respond:   respond,
		OnEvent:   s.out.event,
	}
	if o.temperatureSet {
		t := o.temperature
		s.opts.Temperature = &t
	}
	if o.prompt != "" {
		return s.oneShot(base)
	}
	return s.repl(base)
}

// handleSignals makes SIGINT cancel the running turn (or end the session
// when none runs) and SIGTERM end the session. It also ends the session
// when the command's context is cancelled for another reason than a
// signal. It returns the function that stops it.
func (s *chatSession) handleSignals(parent context.Context, stopAll context.CancelCauseFunc) func() {
	sigs, stop := s.env.signals(os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		parentDone := parent.Done()
		for {
			select {
			case <-done:
				return
			case <-parentDone:
				cause := context.Cause(parent)
				var sig *signalError
				if !errors.As(cause, &sig) {
					stopAll(cause)
					return
				}
				// A signal (lcp's Main cancels on the first one): it
				// reaches sigs too, and is handled there.
				parentDone = nil
			case sig := <-sigs:
				if sig == syscall.SIGTERM {
					stopAll(errTerminated)
					return
				}
				s.mu.Lock()
				cancel := s.cancelTurn
				s.mu.Unlock()
				if cancel == nil {
					stopAll(errInterrupted)
					return
				}
				cancel(errInterrupted)
			}
		}
	}()
	return func() {
		stop()
		close(done)
	}
}

// turn runs one turn of the agent loop under a context Ctrl-C cancels.
func (s *chatSession) turn(base context.Context, text string) (*agent.Result, error) {
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	s.mu.Lock()
	s.cancelTurn = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancelTurn = nil
		s.mu.Unlock()
	}()
	before := s.conv.Len()
	s.conv.Append(llm.User(text))
	s.out.startTurn()
	res, err := agent.Run(ctx, s.eng, s.client, s.conv, s.opts)
	s.out.endTurn()
	if err != nil && s.conv.Len() == before+1 {
		// The model never answered: forget the question, so that the
		// person can ask again without two user messages in a row.
		s.conv.Truncate(before)
	}
	return res, err
}

func (s *chatSession) oneShot(base context.Context) error {
	_, err := s.turn(base, s.o.prompt)
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, errInterrupted) || errors.Is(err, errTerminated):
		return &exitError{code: ExitEngine, msg: "interrupted"}
	case errors.Is(err, agent.ErrMaxSteps):
		return &exitError{code: ExitFailure, msg: oneLine(err.Error())}
	}
	return &exitError{code: ExitEngine, msg: s.explain(err)}
}

func (s *chatSession) repl(base context.Context) error {
	env := s.env
	interactive := env.TTY != nil
	if interactive {
		infos, _ := s.eng.Tools(base)
		model := s.client.Model
		if model == "" {
			model = "the server's model"
		}
		fmt.Fprintf(env.Stderr, "lcp chat: %s at %s, %d tools. /exit to quit, /reset to start over.\n", model, s.client.BaseURL, len(infos))
	}
	lines := bufio.NewReader(env.Stdin)
	failed := 0
	for {
		if interactive {
			fmt.Fprint(env.Stderr, paint(s.out.live.colour, sgrBold, "> "))
		}
		line, err := s.readLine(base, lines)
		if err != nil {
			if interactive {
				fmt.Fprintln(env.Stderr)
			}
			if errors.Is(err, io.EOF) || errors.Is(err, errInterrupted) {
				break
			}
			if errors.Is(err, errLineTooLong) {
				fmt.Fprintf(env.Stderr, "lcp: that line is too long (over %d bytes)\n", maxChatLine)
				continue
			}
			return err
		}
		text := strings.TrimSpace(line)
		switch text {
		case "":
			continue
		case "/exit", "/quit":
			return s.replEnd(failed)
		case "/reset":
			s.conv = agent.NewConversation()
			fmt.Fprintln(env.Stderr, "(conversation cleared)")
			continue
		case "/help":
			fmt.Fprintln(env.Stderr, "Type a message. /reset forgets the conversation, /exit quits. Ctrl-C cancels a turn.")
			continue
		}
		_, err = s.turn(base, text)
		switch {
		case err == nil:
		case errors.Is(err, errTerminated):
			return &exitError{code: ExitEngine, msg: "terminated"}
		case errors.Is(err, errInterrupted):
			fmt.Fprintln(env.Stderr, "(turn cancelled)")
		default:
			failed++
			fmt.Fprintln(env.Stderr, paint(s.out.live.colour, sgrRed, "lcp: "+s.explain(err)))
		}
		if base.Err() != nil {
			break
		}
	}
	return s.replEnd(failed)
}

func (s *chatSession) replEnd(failed int) error {
	if failed > 0 {
		return &exitError{code: ExitEngine, msg: fmt.Sprintf("%d turn(s) failed", failed)}
	}
	return nil
}

// readLine reads the next line the person types. The read runs only while
// the session waits for it, so that nothing reads the terminal while a
// tool asks its questions there.
func (s *chatSession) readLine(ctx context.Context, r *bufio.Reader) (string, error) {
	type result struct {
		line []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := readLine(r, maxChatLine)
		ch <- result{line, err}
	}()
	select {
	case res := <-ch:
		if res.err == io.EOF && len(res.line) > 0 {
			return string(res.line), nil
		}
		return string(res.line), res.err
	case <-ctx.Done():
		// The read goroutine stays blocked on the input; the session is
		// ending anyway.
		return "", context.Cause(ctx)
	}
}

// explain turns a turn's error into one line, with a hint for the usual
// configuration mistakes.
func (s *chatSession) explain(err error) string {
	msg := oneLine(err.Error())
	var he *llm.HTTPError
	if errors.As(err, &he) {
		switch {
		case (he.StatusCode == 401 || he.StatusCode == 403) && s.client.APIKey == "":
			msg += " (no API key: set LCP_API_KEY or OPENAI_API_KEY)"
		case he.StatusCode == 404 && s.client.Model == "":
			msg += " (name the model: --model URL#MODEL)"
		}
	}
	return msg
}

// chatPrinter shows a turn: the model's text on stdout, the tool calls on
// stderr (in colour on a terminal), with the live view's spinner while the
// model or a tool runs.
type chatPrinter struct {
	env       *Env
	stdoutTTY bool
	live      *live

	mu       sync.Mutex
	midLine  bool // streamed text without its final newline yet
	streamed bool // the current step's text was streamed
}

// modelLabel is what the status line says while the model answers.
const modelLabel = "waiting for the model"

func (p *chatPrinter) startTurn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.midLine, p.streamed = false, false
	p.live.begin(modelLabel)
}

func (p *chatPrinter) endTurn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live.end()
	p.endLine()
}

// line prints one of the tool log's lines on stderr, in colour code.
func (p *chatPrinter) line(code, s string) {
	p.live.println(paint(p.live.colour, code, s))
}

// endLine finishes a streamed line; the caller holds mu.
func (p *chatPrinter) endLine() {
	if p.midLine {
		fmt.Fprintln(p.env.Stdout)
		p.midLine = false
	}
}

func (p *chatPrinter) text(s string) string {
	if p.stdoutTTY {
		return safeText(s, true)
	}
	return s
}

func (p *chatPrinter) event(e agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Nothing is drawn while the model's text streams: stdout and stderr
	// may be the same terminal.
	p.live.end()
	switch e.Kind {
	case agent.EventTextDelta:
		fmt.Fprint(p.env.Stdout, p.text(e.Text))
		p.midLine = !strings.HasSuffix(e.Text, "\n")
		p.streamed = true
	case agent.EventText:
		if p.streamed {
			p.endLine()
		} else {
			fmt.Fprintln(p.env.Stdout, p.text(strings.TrimRight(e.Text, "\n")))
		}
		p.streamed = false
	case agent.EventToolCall:
		p.endLine()
		p.streamed = false
		name := safeText(e.Call.Function.Name, false)
		p.line(sgrCyan, fmt.Sprintf("-> %s %s", name, clipLine(e.Call.Function.Arguments, 200)))
		p.live.begin(name)
	case agent.EventToolResult:
		res := e.Result
		// The time the call took, less the time its prompts waited
		// for the person.
		took, ran := "", e.Elapsed-p.live.promptWait()
		if ran >= time.Second {
			took = fmt.Sprintf(" (%.1fs)", ran.Seconds())
		}
		name := safeText(e.Call.Function.Name, false)
		if rejection := tool.RejectionOf(res); rejection != nil {
			p.line(sgrYellow, fmt.Sprintf("<- %s%s: %s", name, took, clipLine(rejection.String(), 200)))
		} else if res.Success {
			p.line(sgrGreen, fmt.Sprintf("<- %s%s: %s", name, took, clipLine(res.Text(), 200)))
		} else {
			p.line(sgrRed, fmt.Sprintf("<- %s failed (%d)%s: %s", name, res.StatusCode, took, clipLine(res.Error, 200)))
		}
		if pi := res.PromptInjection(); pi != "" {
			p.line(sgrDim, fmt.Sprintf("   + prompt_injection: %s", clipLine(pi, 120)))
		}
		// The model reads the result next.
		p.live.begin(modelLabel)
	}
}

// clipLine makes text fit on one line of the tool log: control characters
// escaped, newlines as spaces, at most n runes.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		s = string(r[:n]) + "..."
	}
	return safeText(s, false)
}

// safeText escapes what a terminal would interpret in text from a model or
// a tool — control characters (escape sequences) and bidirectional
// overrides — keeping newlines and tabs when multiline.
func safeText(s string, multiline bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
