// Package worker runs Python tool functions in worker processes: the Python
// worker runtime of the contract, §7 (steps 5-8) and §8.
//
// A Pool starts one process per (workspace, library) on first use, imports
// the library's module in it lazily, keeps it for later calls (module state
// persists, under sys.modules name
// lollms_client.tools_bindings.lcp.persistent_<stem>), and runs calls in
// threads, so calls to one library run concurrently. The worker program is
// lcp_worker.py, embedded in the binary and sent to the interpreter over a
// pipe; it uses only Python's standard library (3.9 or newer).
//
// The package does not normalize results: a Reply holds the tool's return
// value converted to JSON, or the exception it raised, or the library's load
// error. The LCP binding looks tools up, removes hidden names, fills
// defaults, coerces values and normalizes (steps 1-4 and 9).
//
// # Protocol and output
//
// The engine talks to a worker over pipes of its own, never its standard
// input or output: file descriptor 3 carries calls sent while no other call
// of that worker is in flight (the worker thread that reads them runs them
// itself), descriptor 6 everything else towards the worker (calls that
// overlap another one, cancellations, answers to host requests, handler
// changes), and descriptor 4 everything back (results, output, progress,
// log records, host requests). Every message is a frame: the magic "LCP2",
// the body's length and its CRC-32, then the body, a JSON header optionally
// followed by a newline and a raw payload. The worker announces protocol
// version 2 in its hello.
//
// Anything else on a pipe is a protocol violation that ends the worker at
// once: bytes that are not a frame (a tool writing into descriptor 4), a
// frame over the size limit or failing its checksum, a header that is not
// JSON, an unknown frame type, a frame for a call that is not in flight, a
// reply pipe closed by a process that lives on. Calls in flight get a
// *CrashError with Cause CauseProtocol whose reason names the violation, and
// the next call starts a fresh worker (Reply.StateReset). The worker exits
// likewise when the engine's frames are wrong.
//
// Standard output and error are never part of the protocol: what a tool
// prints through sys.stdout and sys.stderr is captured per call (threads the
// tool starts included), capped at Options.OutputLimit per call, and
// delivered with the call's id to the call's OutputHost, or to
// Options.OnOutput; writes to file descriptors 1 and 2 are drained and
// delivered to Options.OnOutput without a call id.
//
// # Events and host services
//
// A Host given to Pool.Call may implement the optional interfaces
// OutputHost, ProgressHost, LogHost and ServiceHost. A tool that declares a
// progress_handler or log_handler parameter by name (not through **kwargs)
// gets one: progress_handler(progress, total=None, message=None) reports
// progress, log_handler(message, level="info", data=None) logs a record at
// one of MCP's levels. Both are rate-safe: the worker sends at most one
// frame of each kind per call every 50 ms (progress coalesced to its latest
// value, log records batched), and they do nothing when the host does not
// implement the matching interface. A call's events reach its host in
// order, from a goroutine of the call (a slow host holds up neither the
// pipe nor other calls), before Pool.Call returns. ServiceHost answers the
// worker's generic requests to a named host service, which its proxies use
// for what needs no frame of its own: the module
// lollms_client.tools_bindings.mcp (MCPBinding, on the services mcp.list
// and mcp.call) and the image, speech and transcription models of
// lollms_client_instance (client.modalities, tti.generate_image,
// tts.generate_audio, stt.transcribe_audio, models.list, tts.list_voices).
// The engine (package lcp) serves them.
//
// # Processes and failures
//
// Each worker runs below a small guardian process, a child subreaper in its
// own process group that receives SIGTERM when the engine dies. When the
// worker dies for any reason (os._exit, a segfault, the OOM killer, a kill by
// the engine) the guardian kills the worker's process group and every
// process left below it, even those that called setsid, and reports the exit
// status. Calls in flight then fail with a *CrashError and the next call
// starts a fresh worker whose Reply has StateReset set.
//
// A call's time limit (Request.Timeout) and its context's cancellation stop
// the tool: the worker raises an exception in the tool's thread (or cancels
// its asyncio task); a tool that does not stop within Options.CancelGrace
// (blocked in C code or in a sleep, or swallowing the exception) loses its
// worker. Options.MemoryLimit sets RLIMIT_AS per worker. Close stops every
// worker within a few seconds.
//
// Libraries may opt into several processes (Options.Processes) for CPU-bound
// work; calls go to the least busy process, and module state is then per
// process, so this suits stateless tools only.
//
// Asynchronous tools (and coroutines returned by plain functions) run in a
// fresh event loop per call, in the call's thread: objects bound to one
// event loop do not survive from one call to the next.
//
// Host requests: the handler proxies (confirm_handler,
// user_interaction_handler) and the lollms_client_instance and
// discussion_instance proxies send requests to the engine, which asks the
// call's Host and answers; the tool blocks meanwhile.
//
// Latency: the goroutine of a call reads the reply pipe itself while it
// waits (one call at a time leads, the others wait for their frame), so a
// result reaches its caller without a hand-off. Both sides poll their pipe
// briefly before parking while calls come in quick succession (waking a
// parked thread costs tens of microseconds on an idle virtual CPU), backing
// off when polling finds nothing and yielding the CPU between polls.
//
// Example:
//
//	pool := worker.NewPool(&worker.Options{Logger: slog.Default()})
//	defer pool.Close()
//	reply, err := pool.Call(ctx, &worker.Request{
//		CallID:    "call-1",
//		Workspace: "/srv/workspaces/alice",
//		Library:   worker.Library{Path: "/srv/tools/database_ops.py"},
//		Function:  "tool_execute_query",
//		Args:      json.RawMessage(`{"database_name": "shop.db", "query": "SELECT 1"}`),
//		Timeout:   30 * time.Second,
//	}, host)
//	switch {
//	case err != nil: // engine failure: timeout, crash, no interpreter...
//	case reply.Exception != nil: // the tool raised
//	default: // reply.Value holds the return value as JSON
//	}
//
// Start-up: the interpreter's real path is looked up once per pool (pyenv
// shims and similar launchers cost tens of milliseconds per start), and the
// first worker sends its compiled program back so that later ones skip
// compiling it.
//
// Worker processes set sys.set_int_max_str_digits(0) (integers of any size
// cross the protocol exactly) and remove the working directory from
// sys.path (files in the workspace never shadow modules). On exit (Close, or
// the engine's end) a worker does not run atexit handlers.
package worker
