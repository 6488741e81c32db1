// Package cli implements the lcp command. Each subcommand lives in its own
// file, in the GitHub CLI's shape: an options struct (XOptions), a
// constructor NewCmdX(env, runF) that parses the flags into it and hands
// it to runF (tests pass their own, to check flag parsing without running
// anything; nil means the real run function), and the run function that
// does the work. Errors become exit codes in one place (ExitCode).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/lcptools/lcp/hitl/term"
	"github.com/lcptools/lcp/internal/buildinfo"
	"github.com/lcptools/lcp/sandbox"
	"github.com/spf13/cobra"
	xterm "golang.org/x/term"
)

// Env is the world a command runs in: its streams and environment. Tests
// build one around buffers.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// TTY is the terminal to ask the operator on, nil when there is none.
	TTY *os.File
	// OpenTTY opens the controlling terminal when standard input carries
	// data (lcp call --batch -); nil when there is none to open.
	OpenTTY func() (*os.File, error)
	// Getenv reads the environment.
	Getenv func(string) string
	// Args are the command-line arguments without the program name.
	Args []string
	// Notify and StopNotify relay the process's signals, as signal.Notify
	// and signal.Stop do (their defaults when nil): Main cancels the
	// command on SIGINT or SIGTERM, and lcp chat takes Ctrl-C for itself.
	Notify     func(c chan<- os.Signal, sig ...os.Signal)
	StopNotify func(c chan<- os.Signal)
	// Executable and Getwd are os.Executable and os.Getwd (their defaults
	// when nil): where this lcp is, and the current directory.
	Executable func() (string, error)
	Getwd      func() (string, error)
}

func (e *Env) executable() (string, error) {
	if e.Executable != nil {
		return e.Executable()
	}
	return os.Executable()
}

func (e *Env) getwd() (string, error) {
	if e.Getwd != nil {
		return e.Getwd()
	}
	return os.Getwd()
}

// System returns the Env of the running process.
func System() *Env {
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Args: os.Args[1:], OpenTTY: term.OpenTTY,
		Notify: signal.Notify, StopNotify: signal.Stop}
	if xterm.IsTerminal(int(os.Stdin.Fd())) && xterm.IsTerminal(int(os.Stderr.Fd())) {
		env.TTY = os.Stdin
	}
	return env
}

// signals relays sigs to a new channel until the returned function is
// called.
func (e *Env) signals(sigs ...os.Signal) (<-chan os.Signal, func()) {
	notify, stop := e.Notify, e.StopNotify
	if notify == nil {
		notify, stop = signal.Notify, signal.Stop
	}
	ch := make(chan os.Signal, 2)
	notify(ch, sigs...)
	return ch, func() { stop(ch) }
}

// signalError is the cause of a command's context cancelled by a signal.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return e.sig.String() + " signal received" }

// stdoutIsTerminal reports whether humans read stdout (tables and colour).
func (e *Env) stdoutIsTerminal() bool {
	f, ok := e.Stdout.(*os.File)
	return ok && xterm.IsTerminal(int(f.Fd()))
}

// Exit codes of the lcp command.
const (
	ExitOK = 0
	// ExitFailure: the tool ran and reported a failure, or checks found errors.
	ExitFailure = 1
	// ExitUsage: bad flags or arguments.
	ExitUsage = 2
	// ExitEngine: the call could not run (unknown tool, timeout,
	// cancelled, missing interpreter...).
	ExitEngine = 3
	// ExitArgs: the arguments do not fit the tool: the function could not
	// be called with them (a missing or unexpected argument name, Python's
	// TypeError at the call itself), or --validate-args refused them.
	ExitArgs = 4
)

// usageError marks errors in how the command was invoked.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// exitError carries an exit code with an optional message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// ExitCode maps an error from a command to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var u *usageError
	var x *exitError
	switch {
	case errors.As(err, &x):
		return x.code
	case errors.As(err, &u):
		return ExitUsage
	}
	return ExitEngine
}

// Main runs the lcp command and returns the exit code. Errors are printed
// on stderr as one line.
//
// Only the subcommand named by the first argument is built when there is
// one: building the others (their flags, help texts and completions) is
// most of what a short command such as lcp version or lcp list costs
// after the process has started. Anything else (no argument, a flag, help,
// completion, an unknown word to suggest a command for) gets the whole
// tree.
//
// LCP_CGROUP=leaf is acted on first, before any command runs (leafGroup).
func Main(env *Env) int {
	if err := leafGroup(env, sandbox.UseLeafGroup); err != nil {
		fmt.Fprintln(env.Stderr, "lcp:", err)
		return ExitCode(err)
	}
	return run1(env, newRoot(env, hotCommand(env.Args)))
}

// hotCommand is the subcommand Main builds alone for args: the first
// argument when it names one, "" otherwise.
func hotCommand(args []string) string {
	if len(args) == 0 {
		return ""
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.name
		}
	}
	return ""
}

// run1 runs root as Main does.
func run1(env *Env, root *cobra.Command) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs, stop := env.signals(os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		select {
		case sig := <-sigs:
			cancel(&signalError{sig})
		case <-ctx.Done():
		}
	}()
	warnNoSandbox(env, sandbox.Probe)
	root.SetArgs(env.Args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		if msg := oneLine(err.Error()); msg != "" {
			fmt.Fprintln(env.Stderr, "lcp: "+msg)
		}
	}
	return ExitCode(err)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// subcommand is one subcommand of lcp: its name (the first word of its
// Use, which TestCommandNames checks) and its constructor.
type subcommand struct {
	name string
	new  func(*Env) *cobra.Command
}

// commands lists the subcommands, in help order.
var commands = []subcommand{
	{"list", func(env *Env) *cobra.Command { return NewCmdList(env, nil) }},
	{"check", func(env *Env) *cobra.Command { return NewCmdCheck(env, nil) }},
	{"call", func(env *Env) *cobra.Command { return NewCmdCall(env, nil) }},
	{"chat", func(env *Env) *cobra.Command { return NewCmdChat(env, nil) }},
	{"mcp", func(env *Env) *cobra.Command { return NewCmdMCP(env, nil) }},
	{"serve", func(env *Env) *cobra.Command { return NewCmdServe(env, nil) }},
	{"new", func(env *Env) *cobra.Command { return NewCmdNew(env, nil) }},
	{"doctor", func(env *Env) *cobra.Command { return NewCmdDoctor(env, nil) }},
	{"version", func(env *Env) *cobra.Command { return NewCmdVersion(env, nil) }},
}

// NewRoot returns the lcp root command with all its subcommands.
func NewRoot(env *Env) *cobra.Command { return newRoot(env, "") }

// newRoot returns the lcp root command with the subcommand named only, or
// with all of them when only is "".
func newRoot(env *Env, only string) *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "lcp",
		Short: "Tools for LLMs: LCP Python tool folders, native Go tools and MCP servers",
		Long: `lcp turns folders of Python tool_* functions, the built-in library and MCP
servers into one inventory of LLM tools, and runs calls to them safely.

With neither --tools nor --file, the built-in default library is used.`,
		Example: `  $ lcp list
  $ lcp call tool_list_files recursive=true
  $ lcp new my_notes --dir ./my_tools && lcp check --tools ./my_tools
  $ lcp mcp install claude-desktop --tools ./my_tools`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          subcommandArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				_, err := fmt.Fprint(env.Stdout, buildinfo.Read().String())
				return err
			}
			return cmd.Help()
		},
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print lcp's version, commit and Go version (as lcp version does)")
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return flagError(cmd, err, env.Args) })
	for _, c := range commands {
		if only == "" || c.name == only {
			root.AddCommand(c.new(env))
		}
	}
	return root
}
