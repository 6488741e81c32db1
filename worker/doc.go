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
// The engine talks to a worker over its own pipe pair (file descriptors 3
// and 4), with length-prefixed frames of a JSON header and a raw payload,
// after a hello that announces the protocol version. Standard output and
// error are never part of the protocol: what a tool prints through
// sys.stdout and sys.stderr is captured per call (threads the tool starts
// included) and delivered to Options.OnOutput with the call's id, capped at
// Options.OutputLimit per call; writes to file descriptors 1 and 2 are
// drained and delivered without a call id.
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
