// Package builtin is lcp's built-in default library (SPEC §11): the tools
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
//   - system_shell: tool_execute_shell_command(command, timeout). strict
//     asks for every command, full_access never, safe asks unless package
//     shell judges the command read-only (or writing only inside the
//     workspace). Its description tells the LLM the autonomy level and OS.
//   - execute_python: tool_execute_python_code(code, timeout) and
//     tool_execute_python_file(file_name, args=[], timeout), run by the
//     configured interpreter in a fresh process; safe asks only when
//     package pyrisk finds process spawning or shell escapes in the parsed
//     code (local modules it imports included).
//
// Commands and code run in the workspace, in their own process group, with
// a time limit (the whole group is killed) and output caps that keep the
// head and the tail. Results follow the LCP return contract:
// {"success", "output"} or {"success": false, "error"}, plus payload keys
// such as stdout, stderr, return_code, file_name, matches. A rejected
// confirmation is a failed result carrying the operator's reason. The
// confirmation's source starts with the reasons safe mode asks (as comments)
// followed by the command or code. Its label is "Run a shell command", "Run
// Python code", "Run Python script <file>" or "Write file <file>": an
// "always" answer covers that label for the session.
//
// Arguments are coerced as SPEC §7 says before validation ("50" for an
// integer is 50), since LLMs often send numbers as strings.
//
// The seeds' example Python libraries ship in package pylib, extracted on
// demand for discovery like any tool folder.
package builtin
