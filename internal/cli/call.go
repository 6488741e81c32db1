package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/hitl/term"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
	"github.com/spf13/cobra"
)

// CallOptions are the options of lcp call.
type CallOptions struct {
	env *Env
	ctx context.Context

	inv      inventoryFlags
	approval approvalFlags
	tool     string   // the TOOL argument
	pairs    []string // the key=value arguments
	args     string
	context  string
	json     bool
	batch    string
	maxInput int64
	verbose  bool
}

// NewCmdCall returns lcp call; runF runs it (nil: runCall).
func NewCmdCall(env *Env, runF func(*CallOptions) error) *cobra.Command {
	o := &CallOptions{env: env, maxInput: 64 << 20}
	cmd := &cobra.Command{
		Use:   "call TOOL [--args JSON | key=value ...]",
		Short: "Run one tool call (or a batch) and print the result",
		Long: `Run one call and print its normalized result (--json: the LCP result object).

Arguments come from --args as a JSON object, or as key=value pairs where the
value is read as JSON when it is valid JSON (5, true, [1,2], {"a":1}, "x")
and as a string otherwise.

Confirmations and questions of the tool are asked on the terminal. Without a
terminal nothing is approved unless --yes or --approve=allow says so, and
questions take their default answer or are declined.

While the call runs, a terminal shows a spinner with the elapsed time and
the progress the tool reports, and what the tool prints and logs, on
stderr (-v: also without a terminal). The result alone goes to stdout.
A batch shows what its tools print and log the same way, without the
spinner.

--batch FILE.jsonl (or - for stdin) runs each line {"tool", "args"} in order
against one engine and prints one line per input line,
{"line": N, "tool": NAME, "result": {...}}: the input's line number, its tool
and the LCP result object as --json prints it.`,
		Example: `  # arguments as key=value (values read as JSON when they are JSON)
  $ lcp call tool_write_file file_name=notes.md content='# Notes'
  $ lcp call tool_read_file file_name=notes.md start_line=1 end_line=5

  # a tool of a folder, arguments as JSON, the result object as JSON
  $ lcp call --tools ./my_tools tool_greet --args '{"name": "Ada"}' --json

  # approve the tool's confirmations without asking
  $ lcp call --yes tool_execute_shell_command command='rm -rf build'

  # many calls against one engine, one result line each
  $ echo '{"tool": "tool_list_files", "args": {}}' | lcp call --batch -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.batch != "" {
				if len(args) > 0 {
					return usagef("--batch takes no TOOL argument")
				}
				return nil
			}
			if len(args) == 0 {
				return usagef("call needs a TOOL name (run lcp list to see them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ctx = cmd.Context()
			if len(args) > 0 {
				o.tool, o.pairs = args[0], args[1:]
			}
			if runF != nil {
				return runF(o)
			}
			return runCall(o)
		},
	}
	o.inv.register(cmd.Flags(), runsTools)
	o.inv.status = env.Stderr
	f := cmd.Flags()
	f.StringVar(&o.args, "args", "", "the arguments as a JSON `object`")
	f.StringVar(&o.context, "context", "", "the tool_context as a JSON `object`")
	f.BoolVar(&o.json, "json", false, "print the result object as JSON")
	o.approval.register(f, true, "")
	f.StringVar(&o.batch, "batch", "", "run the calls of a JSONL `file` (- for stdin)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "show what the tool prints and logs on stderr also without a terminal (and its debug records)")
	registerCompletions(cmd, &o.inv)
	cmd.ValidArgsFunction = completeCall(&o.inv)
	return cmd
}

// terminalBroker builds the broker that answers the tools' confirmations
// and questions on the terminal (or, without one, as the flags say).
// batchStdin says that standard input carries data, so the terminal must
// be opened apart; wrap, when set, wraps the terminal front end (the live
// view pauses around its prompts). It returns the broker and the function
// that closes it.
func terminalBroker(env *Env, approval *approvalFlags, batchStdin bool, wrap func(hitl.FrontEnd) hitl.FrontEnd) (*hitl.Broker, func(), error) {
	policy, err := approval.policy()
	if err != nil {
		return nil, nil, err
	}
	var fe hitl.FrontEnd = unattended
	var closers []func()
	tty := env.TTY
	if batchStdin {
		// Standard input carries the batch: ask on the controlling
		// terminal, when there is one.
		tty = nil
		if env.OpenTTY != nil {
			if f, err := env.OpenTTY(); err == nil {
				tty = f
				closers = append(closers, func() { _ = f.Close() })
			}
		}
	}
	if tty != nil {
		t := term.New(tty, env.Stderr)
		fe = t
		if wrap != nil {
			fe = wrap(t)
		}
		closers = append([]func(){func() { _ = t.Close() }}, closers...)
	}
	broker := hitl.New(fe, &hitl.Options{Policy: policy})
	// The broker closes first: it withdraws open prompts and waits until
	// the terminal is restored.
	closers = append([]func(){func() { _ = broker.Close() }}, closers...)
	cleanup := func() {
		for _, c := range closers {
			c()
		}
	}
	return broker, cleanup, nil
}

func runCall(o *CallOptions) error {
	ctx, env := o.ctx, o.env
	var toolCtx map[string]any
	if o.context != "" {
		if err := json.Unmarshal([]byte(o.context), &toolCtx); err != nil || toolCtx == nil {
			return usagef("--context must be a JSON object")
		}
	}
	var callArgs json.RawMessage
	if o.batch == "" {
		var err error
		if callArgs, err = parseCallArgs(o.args, o.pairs); err != nil {
			return err
		}
	}
	live := newLive(env, o.verbose)
	broker, cleanup, err := terminalBroker(env, &o.approval, o.batch == "-", live.frontEnd)
	if err != nil {
		return err
	}
	defer cleanup()
	eng, err := o.inv.engine(ctx, func(c *lcp.Config) {
		c.Respond = broker.Respond
		if o.batch != "" {
			// A batch shows what its tools print and log (on a terminal,
			// or with -v), without a status line between its result lines.
			c.OnEvent = live.event
		}
	})
	if err != nil {
		return err
	}
	defer eng.Close()
	if o.batch != "" {
		err := runBatch(ctx, env, eng, o, toolCtx)
		live.end()
		return err
	}
	warnUnknownArgs(ctx, env, eng, o.tool, callArgs)
	// The live view shows the call as it runs (stderr); it is gone before
	// the result is printed.
	live.begin(o.tool)
	res, callErr := eng.Call(ctx, o.tool, callArgs, &tool.CallOptions{Context: toolCtx, OnEvent: live.event})
	live.end()
	if callErr != nil {
		res = tool.ErrorResult(callErr)
	}
	var unknown *tool.UnknownToolError
	if errors.As(callErr, &unknown) {
		// The result keeps the contract's text; the person gets the
		// nearest names too.
		if o.json {
			if err := writeJSON(env.Stdout, res); err != nil {
				return err
			}
		}
		return &exitError{code: ExitEngine, msg: res.Error + didYouMean(suggest(unknown.Name, toolNames(ctx, eng)))}
	}
	if o.json {
		if err := writeJSON(env.Stdout, res); err != nil {
			return err
		}
	} else {
		printResult(env, res)
	}
	rejection := tool.RejectionOf(res)
	switch {
	case rejection != nil && o.json:
		return &exitError{code: ExitFailure, msg: oneLine(rejection.String())}
	case callErr != nil && errors.As(callErr, new(*tool.InvalidArgumentsError)):
		msg := "" // printResult has shown the error
		if o.json {
			msg = oneLine(callErr.Error())
		}
		return &exitError{code: ExitArgs, msg: msg}
	case !res.Success && bindFailure(res, o.tool):
		return &exitError{code: ExitArgs, msg: bindHelp(ctx, eng, o.tool, res)}
	case callErr != nil && errors.As(callErr, new(*worker.InterpreterError)):
		return &exitError{code: ExitEngine, msg: "Python tools need Python 3.9 or newer: install it, or name the interpreter with --python PATH (for example --python /usr/bin/python3.12)"}
	case callErr != nil && !o.json:
		return &exitError{code: ExitEngine} // printResult has shown the error
	case callErr != nil:
		return &exitError{code: ExitEngine, msg: oneLine(callErr.Error())}
	case !res.Success && o.json:
		return &exitError{code: ExitFailure, msg: "the tool reported a failure: " + oneLine(res.Error)}
	case !res.Success:
		return &exitError{code: ExitFailure} // printResult has shown the error
	}
	return nil
}

// restates reports whether a tool's error text only passes on the
// operator's reason ("Not dropped: <reason>").
func restates(text, reason string) bool {
	reason = strings.TrimRight(strings.TrimSpace(reason), ". ")
	return reason != "" && strings.HasSuffix(strings.TrimRight(text, ". "), reason)
}

// toolNames lists the inventory's tool names, for suggestions.
func toolNames(ctx context.Context, eng *lcp.Engine) []string {
	infos, err := eng.Tools(ctx)
	if err != nil {
		return nil
	}
	names := make([]string, len(infos))
	for i := range infos {
		names[i] = infos[i].Name
	}
	return names
}

// parseCallArgs builds the arguments object from --args or key=value pairs.
func parseCallArgs(argsJSON string, pairs []string) (json.RawMessage, error) {
	if argsJSON != "" && len(pairs) > 0 {
		return nil, usagef("give the arguments either with --args or as key=value pairs, not both")
	}
	if argsJSON != "" {
		if err := jsonObject(argsJSON); err != nil {
			return nil, usagef("--args must be a JSON object such as '{\"name\": \"Ada\"}': %w", err)
		}
		return json.RawMessage(argsJSON), nil
	}
	m := map[string]json.RawMessage{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usagef("argument %q is not key=value", p)
		}
		if json.Valid([]byte(v)) && strings.TrimSpace(v) != "" {
			m[k] = json.RawMessage(v)
		} else {
			b, _ := json.Marshal(v)
			m[k] = b
		}
	}
	return json.Marshal(m)
}

// jsonObject says in words why s is not one JSON object: where its JSON
// breaks, or what kind of value it is instead.
func jsonObject(s string) error {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("not valid JSON at character %d: %s", syn.Offset, syn.Error())
		}
		return fmt.Errorf("not valid JSON: %w", err)
	}
	switch v.(type) {
	case map[string]any:
		return nil
	case nil:
		return errors.New("got null")
	case []any:
		return errors.New("got an array")
	case string:
		return errors.New("got a string")
	case float64:
		return errors.New("got a number")
	case bool:
		return errors.New("got true or false")
	}
	return errors.New("got something else")
}

// statusWords says what a failed result's status code means, for a
// person (the codes of the LCP result object; --json keeps the number).
func statusWords(code int) string {
	switch code {
	case 400:
		return "the arguments were refused"
	case 403:
		return "not allowed"
	case 404:
		return "not found"
	case 408, 504:
		return "timed out"
	case 499:
		return "cancelled"
	case 500:
		return "failed"
	case 503:
		return "unavailable"
	}
	return fmt.Sprintf("failed (status %d)", code)
}

// printResult shows a result to a person: the output on stdout, the error
// on stderr (a call the operator refused says so, in tool.Rejection's
// words). A result made of content blocks shows its blocks in order:
// text as text, the others (images, sounds, resources) as placeholders
// with their type and size; --json has them whole.
func printResult(env *Env, res *tool.Result) {
	if rejection := tool.RejectionOf(res); rejection != nil {
		// A refusal, not a failure of the tool. The tool's own text
		// follows when it says more than the reason (what was not
		// done, say).
		fmt.Fprintln(env.Stderr, rejection.String())
		if detail := strings.TrimSpace(res.Error); detail != "" && !restates(detail, rejection.Reason) {
			fmt.Fprintln(env.Stderr, detail)
		}
		return
	}
	if !res.Success {
		fmt.Fprintf(env.Stderr, "%s: %s\n", statusWords(res.StatusCode), res.Error)
		if tb := res.Traceback(); tb != "" {
			fmt.Fprintln(env.Stderr, strings.TrimRight(tb, "\n"))
		}
		for i := range res.Content {
			if res.Content[i].Type != tool.ContentText {
				fmt.Fprintln(env.Stderr, res.Content[i].Placeholder())
			}
		}
		return
	}
	if len(res.Content) > 0 {
		for i := range res.Content {
			fmt.Fprintln(env.Stdout, res.Content[i].Placeholder())
		}
		if pi := res.PromptInjection(); pi != "" {
			fmt.Fprintf(env.Stderr, "prompt injection: %s\n", pi)
		}
		return
	}
	out := bytes.TrimSpace(res.Output)
	if len(out) > 0 && out[0] == '"' {
		fmt.Fprintln(env.Stdout, res.Text())
	} else {
		var buf bytes.Buffer
		if json.Indent(&buf, out, "", "  ") == nil {
			fmt.Fprintln(env.Stdout, buf.String())
		} else {
			fmt.Fprintln(env.Stdout, string(out))
		}
	}
	if pi := res.PromptInjection(); pi != "" {
		fmt.Fprintf(env.Stderr, "prompt injection: %s\n", pi)
	}
}

// runBatch runs each line {"tool","args"} in order and prints one result
// line per input line, which says its line number in the input (blank
// lines count, and get no result) and its tool. A malformed line gets an
// error result (400) and the batch goes on.
func runBatch(ctx context.Context, env *Env, eng *lcp.Engine, o *CallOptions, toolCtx map[string]any) error {
	var in io.Reader
	if o.batch == "-" {
		in = env.Stdin
	} else {
		f, err := os.Open(o.batch)
		if err != nil {
			return usagef("--batch: %v", err)
		}
		defer f.Close()
		in = f
	}
	r := bufio.NewReader(in)
	failed := 0
	for n := 1; ; n++ {
		line, err := readLine(r, o.maxInput)
		if err == io.EOF && line == nil {
			break
		}
		if err != nil && err != io.EOF {
			if errors.Is(err, errLineTooLong) {
				failed++
				if werr := writeBatchLine(env.Stdout, n, nil, badLine(n, err.Error())); werr != nil {
					return werr
				}
				continue
			}
			return fmt.Errorf("--batch: reading line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if err == io.EOF {
				break
			}
			continue // blank lines get no result, but count
		}
		res, name := runBatchLine(ctx, eng, n, line, toolCtx)
		if !res.Success {
			failed++
		}
		if werr := writeBatchLine(env.Stdout, n, name, res); werr != nil {
			return werr
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == io.EOF {
			break
		}
	}
	if failed > 0 {
		return &exitError{code: ExitFailure, msg: fmt.Sprintf("%d call(s) of the batch failed", failed)}
	}
	return nil
}

// runBatchLine runs the call of one line; name is the line's tool, nil
// when the line names none.
func runBatchLine(ctx context.Context, eng *lcp.Engine, n int, line []byte, toolCtx map[string]any) (res *tool.Result, name *string) {
	var c struct {
		Tool *string         `json:"tool"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(line, &c); err != nil {
		return badLine(n, "not a JSON object {\"tool\", \"args\"}: "+err.Error()), nil
	}
	if c.Tool == nil {
		return badLine(n, `missing "tool"`), nil
	}
	if t := bytes.TrimSpace(c.Args); len(t) > 0 && t[0] != '{' && string(t) != "null" {
		return badLine(n, `"args" must be a JSON object`), c.Tool
	}
	res, err := eng.Call(ctx, *c.Tool, c.Args, &tool.CallOptions{Context: toolCtx})
	if err != nil {
		return tool.ErrorResult(err), c.Tool
	}
	return res, c.Tool
}

// writeBatchLine writes the result of batch line n as one line of JSON,
// an envelope {"line": n, "tool": name, "result": {...}}: "line" is
// 1-based, "tool" is there when the line names one, and "result" is the
// LCP result object untouched, so a tool's own "line" or "tool" keys are
// never lost.
func writeBatchLine(w io.Writer, n int, name *string, res *tool.Result) error {
	var enc bytes.Buffer
	if err := writeJSONLine(&enc, res); err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"line":%d`, n)
	if name != nil {
		b.WriteString(`,"tool":`)
		b.Write(jsonString(*name))
	}
	b.WriteString(`,"result":`)
	b.Write(bytes.TrimSuffix(enc.Bytes(), []byte("\n")))
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// jsonString is s as a JSON string, without HTML escaping.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func badLine(n int, msg string) *tool.Result {
	r := tool.Failure(fmt.Sprintf("batch line %d: %s", n, msg))
	r.StatusCode = 400
	return r
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line of at most max bytes; a longer line is consumed
// and reported as errLineTooLong.
func readLine(r *bufio.Reader, max int64) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if int64(len(line)+len(chunk)) > max {
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
			return []byte{}, fmt.Errorf("%w (over %d bytes)", errLineTooLong, max)
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(line) == 0 {
			return nil, io.EOF
		}
		return line, err
	}
}
