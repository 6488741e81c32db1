// Package builtin is lcp's built-in default library (contract §11): the tools
// a host gets when it names no tool folder. They are written in Go, need no
// Python to be listed or (except execute_python) to run, and behave like
// any library: LCP-style specs, the same normalization, confirmations and
// questions through the call's context, host configuration per library.
//
//	ts, err := builtin.New(&builtin.Options{Workspace: dir})
//	if err != nil { ... }
//	defer ts.Close()
//	res, err := tool.Call(ctx, ts, "tool_read_file", json.RawMessage(`{"file_name":"notes.md"}`), nil)
//
// The libraries, keyed in host_tool_configs by their ID:
//
//   - workspace_tools: tool_write_file(file_name, content),
//     tool_append_file(file_name, content), tool_read_file(file_name,
//     start_line=1, end_line), tool_list_files(directory=".",
//     recursive=false), tool_find_files(pattern, path=".",
//     max_results=50), tool_grep_files(pattern, file_extension=None,
//     max_results=50, search_mode="case_insensitive",
//     sort_by_relevance=True, path="."), tool_file_info(file_name). Every
//     path is confined to the workspace by package workspace (os.Root).
//     Writes ask in strict, and in safe only inside .git.
//   - system_shell: tool_execute_shell_command(command, timeout, network,
//     unsandboxed). Its description tells the LLM the autonomy level, the
//     sandbox and the OS.
//   - execute_python: tool_execute_python_code(code, timeout, network,
//     unsandboxed) and tool_execute_python_file(file_name, args=[],
//     timeout, network, unsandboxed), run by the configured interpreter in
//     a fresh process.
//
// In strict and safe, on Linux, commands and Python runs go to the kernel
// sandbox (package sandbox). Safe runs them copy-on-write without asking,
// unless package shell or pyrisk finds that they need a permission beyond
// the sandbox (the network, a write outside the workspace, the host), or
// the model asks for one (network, unsandboxed): then it asks first. After
// the run, new files are applied at once and changes to existing files
// (modifications, deletions, modes, .git and what git runs or loads, files
// that run later such as .envrc or a json.py, links pointing out) wait for
// one confirmation, labelled "Apply changes to existing workspace files";
// files the session created change without asking. Strict asks before
// every run, saying what of git stays read-only, and writes the workspace
// directly, every repository's git dir, hooks and includes read-only
// unless the approval granted it. full_access runs on the host, unsandboxed. Where
// there is no sandbox (another system, user namespaces refused, the
// library's "sandbox": "off"), safe asks unless the classifiers prove the
// run harmless. Results say what the sandbox blocked (sandbox_blocked),
// which limit a run hit (limit_hit), and what happened to its changes
// (workspace_changes).
//
// Commands and code run in the workspace, in their own process group, with
// a time limit (the whole group is killed) and output caps that keep the
// head and the tail. Results follow the LCP return contract:
// {"success", "output"} or {"success": false, "error"}, plus payload keys
// such as stdout, stderr, return_code, file_name, matches. A rejected
// confirmation is a failed result carrying the operator's reason. The
// confirmation's source starts with the reasons safe mode asks (as comments)
// followed by the command or code. Its label is "Run a shell command", "Run
// Python code", "Run Python script <file>", "Write file <file>" or "Apply
// changes to existing workspace files": an "always" answer covers that
// label for the session.
//
// Arguments are coerced as contract §7 says before validation ("50" for an
// integer is 50), since LLMs often send numbers as strings.
//
// The seeds' example Python libraries ship in package pylib, extracted on
// demand for discovery like any tool folder.
package builtin
