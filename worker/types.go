package worker

import (
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"time"
)

// Options configure a Pool. The zero value (or nil) is usable.
type Options struct {
	// Python is the interpreter to run; "" means python3 on PATH. It must be
	// Python 3.9 or newer.
	Python string

	// MemoryLimit caps the address space of each worker process in bytes
	// (RLIMIT_AS); 0 means unlimited. A tool that allocates past it usually
	// gets a MemoryError (a tool exception); if the worker dies instead, the
	// call gets a *CrashError with Cause CauseMemoryLimit.
	MemoryLimit int64

	// Processes returns how many worker processes a library may use in one
	// workspace (default 1). With more than one, calls go to the least busy
	// process and module state is per process, so only stateless, CPU-bound
	// libraries should opt in.
	Processes func(lib Library) int

	// OnProcess is told when a worker process starts and when it ends
	// (for metrics); it must return quickly. Nil: nobody is told.
	OnProcess func(ProcessEvent)

	// OnOutput receives what tools print. It is called from the goroutine that
	// reads the worker's pipe, so it must return quickly.
	OnOutput func(Output)

	// Logger receives the pool's diagnostics; nil discards them.
	Logger *slog.Logger

	// Env holds extra environment variables ("KEY=value") for the workers, on
	// top of the engine's own environment.
	Env []string

	// OutputLimit caps the captured output kept per call and stream, in
	// characters (default 1 MiB); the rest is counted in Output.Dropped.
	OutputLimit int

	// MaxResultBytes caps the JSON size of a tool's return value (default
	// 128 MiB); a larger value gives a *ResultTooLargeError.
	MaxResultBytes int

	// CancelGrace is how long a timed-out or cancelled call may take to stop
	// before its worker is killed (default 1s).
	CancelGrace time.Duration

	// StartTimeout bounds a worker's start-up handshake (default 30s).
	StartTimeout time.Duration

	// StoppedLimit is how long a worker with calls in flight may stay
	// stopped (SIGSTOP, SIGTSTP, a debugger; Linux only, where the
	// process state says so) before the engine kills it, failing its
	// calls with a *CrashError that says so; the next call starts a
	// fresh worker. Default 10s; negative: never.
	StoppedLimit time.Duration

	// IdleTimeout stops a worker that served no call for this long (its
	// module state goes with it; the next call starts a fresh worker without
	// reporting a reset). 0 keeps workers until Close or Release.
	IdleTimeout time.Duration

	// Wrap, when set, may rewrite the command of a worker process right
	// before it starts, for the library lib in workspace (to run it in a
	// sandbox, say). The command's pipes are in ExtraFiles (the worker's
	// file descriptors 3 to 6, in that order) and its working directory is
	// the workspace; both must reach the interpreter. What Wrap returns
	// hooks into that process's life (Wrapped). An error means the worker
	// does not start. calls returns the contexts of the calls in flight on
	// that worker (each carries its tool.CallRequest): what the worker
	// does in its sandbox, a connection to ask the person about, belongs
	// to them.
	Wrap func(cmd *exec.Cmd, lib Library, workspace string, calls func() []context.Context) (Wrapped, error)
}

// Wrapped is what Options.Wrap returns for one worker process: the
// functions the pool calls at points of its life. Each may be nil.
type Wrapped struct {
	// Started is called once the process has started or failed to.
	Started func()
	// CallStarted is called as each call (a load included) is handed to
	// the process, before its request is sent: a sandbox's budget per
	// call starts counting there.
	CallStarted func()
	// CallEnded is called once a call's result has arrived, before the
	// caller gets it; an error fails the call with that error instead
	// (the call went over a budget, say) and ends the process: the next
	// call starts a fresh one. It is not called for a call that failed
	// or was left by its caller.
	CallEnded func() error
}

// Library identifies one tool library. Path is its identity: two libraries
// with the same Stem but different paths never share a module or a process.
type Library struct {
	// Path is the absolute path of the .py file. For a library registered
	// from code it is a pseudo path that only serves as identity and
	// __file__.
	Path string
	// Stem is the module stem (database_ops for database_ops.py); it names
	// the module lollms_client.tools_bindings.lcp.persistent_<Stem>. Empty
	// means the base name of Path without .py.
	Stem string
	// Code, when non-empty, is the module's source: an in-memory module
	// (dynamic registration) instead of the file at Path. Libraries with the
	// same Path but different Code run in different processes.
	Code string
}

// Handlers says which interaction handlers the host has. Only those get a
// proxy in the library's config and a call of its set_*_handler hook.
type Handlers struct {
	Confirm  bool
	Interact bool
}

// Request is one call of a tool function (SPEC.md §7 steps 5-8). The binding
// has already looked the tool up, removed hidden names, filled defaults and
// coerced values.
type Request struct {
	// CallID attributes captured output and host requests to the call.
	CallID string
	// Workspace is the absolute directory the worker runs in (its CWD).
	Workspace string
	// Library is the library that defines Function.
	Library Library
	// Function is the module-level function to call (a tool_* function, or
	// a tool_*_prompt provider).
	Function string
	// Args is a JSON object of arguments; empty means {}.
	Args json.RawMessage
	// Context is the tool_context given to functions that declare it;
	// empty means {}.
	Context json.RawMessage
	// Config is host_tool_configs[stem]; empty means {}. It is used when
	// the library is loaded.
	Config json.RawMessage
	// Handlers says which host handlers exist.
	Handlers Handlers
	// HasLLM and HasDiscussion say whether lollms_client_instance can
	// generate text and whether discussion_instance is a proxy or None.
	HasLLM, HasDiscussion bool
	// Timeout limits the call; 0 means none.
	Timeout time.Duration
	// ReturnOnCancel makes Call return as soon as its context ends, with
	// ErrCancelled (a *TimeoutError without a limit for a deadline),
	// while the call is stopped in the background exactly as it would be
	// otherwise: the worker is told to cancel it, and killed if the tool
	// does not stop within Options.CancelGrace. Events the call reports
	// after that are dropped. Without it Call returns once the call has
	// stopped, with what stopping it took (a *TimeoutError with Killed,
	// say).
	ReturnOnCancel bool
}

// Exception describes a Python exception.
type Exception struct {
	// Type is the exception class name, e.g. ValueError.
	Type string `json:"type"`
	// Message is str() of the exception; it may be empty.
	Message string `json:"message"`
	// Traceback is the formatted traceback, worker frames removed.
	Traceback string `json:"traceback"`
}

// Reply is what a call produced. Exactly one of Value, Exception, LoadError
// and NotModuleLevel is set.
type Reply struct {
	// Value is the tool's return value as JSON, converted as SPEC.md §16
	// says (integers exact, bytes as base64, sets as sorted lists, other
	// objects as repr()).
	Value json.RawMessage
	// Converted lists the lossy conversions in Value as a JSON array of
	// {"path", "from", "to"} (JSON pointers into Value), or nil.
	Converted json.RawMessage
	// Exception is set when the tool raised (any BaseException).
	Exception *Exception
	// LoadError is set when the library failed to load; the next call
	// retries the load.
	LoadError *Exception
	// NotModuleLevel is set when the function is not a callable module
	// attribute (defined only inside a function or class, or in a branch
	// that did not run).
	NotModuleLevel bool
	// StateReset is set on the first call served by a fresh worker after
	// the previous one died: the library's module state was lost.
	StateReset bool
}

// LoadReply is what Pool.Load produced.
type LoadReply struct {
	// Functions are the names of the module's callable attributes that start
	// with tool_, in definition order.
	Functions []string
	// LoadError is set when the library failed to load.
	LoadError *Exception
	// StateReset is as in Reply.
	StateReset bool
}

// ConfirmRequest is a tool asking the operator's approval through its
// confirm_handler proxy.
type ConfirmRequest struct {
	// Source is what is to be approved (code, a command line...).
	Source string
	// Label is the script_label argument.
	Label string
	// Argv is the argv argument, nil when the tool passed None.
	Argv []string
	// Library is the stem of the asking library.
	Library string
}

// GenerateRequest is a tool asking the host's LLM for text through
// lollms_client_instance.generate_text.
type GenerateRequest struct {
	// Prompt is the prompt text.
	Prompt string
	// Options is a JSON object of the other keyword arguments (n_predict,
	// temperature...).
	Options json.RawMessage
	// Library is the stem of the asking library.
	Library string
}

// Host answers the requests a tool makes while it runs; the tool blocks
// meanwhile. The context is cancelled when the call ends. Methods may be
// called concurrently.
type Host interface {
	// Confirm asks for approval: decision is allow, always or reject.
	Confirm(ctx context.Context, r ConfirmRequest) (decision, reason string)
	// Interact asks the user: request is {"type", "title", "prompt",
	// "options", "default"}; nil means cancelled.
	Interact(ctx context.Context, request json.RawMessage) (answer *string)
	// ExecuteTool runs a tool of the host's inventory and returns its
	// normalized §7 result object.
	ExecuteTool(ctx context.Context, name string, params json.RawMessage) json.RawMessage
	// Generate runs the host's LLM.
	Generate(ctx context.Context, r GenerateRequest) (string, error)
	// Discussion returns the conversation's messages as JSON, or nil when
	// there is none.
	Discussion(ctx context.Context) json.RawMessage
}

// Output is text a tool wrote to sys.stdout or sys.stderr (attributed to its
// call), or that something wrote to the worker's file descriptors 1 and 2
// directly (CallID is then empty).
type Output struct {
	// CallID is the Request.CallID of the writing call, or "".
	CallID string
	// Library is the library's path and Workspace the workspace of the
	// worker that produced the output.
	Library, Workspace string
	// Stream is "stdout" or "stderr".
	Stream string
	// Data is the text (UTF-8, invalid bytes replaced). Output without a
	// call id comes in chunks of whole lines.
	Data string
	// Dropped counts characters discarded because the call's output went
	// past Options.OutputLimit; it is set on a final record with empty Data.
	Dropped int64
	// PID is the worker's process id.
	PID int
}

// The optional per-call host interfaces. A Host given to Pool.Call may also
// implement any of them; the worker then sends the matching events or
// requests of that call, and does not when it does not.

// OutputHost receives a call's printed output: what the tool (and the
// threads it started) wrote to sys.stdout and sys.stderr, instead of
// Options.OnOutput, which keeps the output that belongs to no live call.
// Output is delivered in order, from a goroutine of the call, before
// Pool.Call returns.
type OutputHost interface{ Output(Output) }

// Progress is a progress report of a running tool: its progress_handler
// was called with (progress, total, message).
type Progress struct {
	// Progress is the progress so far; Total is the amount it goes to, nil
	// when unknown.
	Progress float64
	Total    *float64
	// Message says what the tool is doing, or "".
	Message string
}

// ProgressHost receives the progress reports of a call. Reports come in
// order, coalesced by the worker (at most one every 50 ms, the latest), from
// a goroutine of the call, before Pool.Call returns.
type ProgressHost interface {
	Progress(ctx context.Context, p Progress)
}

// LogRecord is a record a running tool logged with its log_handler.
type LogRecord struct {
	// Level is one of MCP's logging levels: debug, info, notice, warning,
	// error, critical, alert, emergency.
	Level, Message string
	// Data is the record's data as JSON, or nil.
	Data json.RawMessage
}

// LogHost receives the log records of a call, in order, batched by the
// worker (a tool that logs more than 100 records in 50 ms loses the rest of
// them, with a warning record that says how many), from a goroutine of the
// call, before Pool.Call returns.
type LogHost interface {
	Log(ctx context.Context, r LogRecord)
}

// ServiceHost answers generic requests from Python to a named host
// service: the worker's proxies use them for what needs no protocol frame
// of its own. params and the result are JSON; an error reaches the tool as
// a RuntimeError with its text. The context ends with the call.
type ServiceHost interface {
	Service(ctx context.Context, name string, params json.RawMessage) (json.RawMessage, error)
}

// ProcessEvent is a worker process starting or ending, as
// Options.OnProcess sees it.
type ProcessEvent struct {
	// Started is true when the process has started (its handshake done),
	// false when it has ended.
	Started bool
	// Restart marks a start after a crash of the library's previous
	// process in the workspace (its first call reports a state reset).
	Restart bool
	// Crashed marks an end that was not the pool's doing (a crash,
	// os._exit, a kill for a time limit), with Reason saying why.
	Crashed   bool
	Reason    string
	Library   string // the library's path
	Workspace string
	PID       int
}
