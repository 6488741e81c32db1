package lint

import (
	"fmt"
	"strings"
)

// Severity is how serious a finding is: "error", "warning" or "info", the
// words tool.Diagnostic uses.
type Severity string

// The severities, from the most serious.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// rank orders severities: error 3, warning 2, info 1, anything else 0.
func (s Severity) rank() int {
	switch s {
	case Error:
		return 3
	case Warning:
		return 2
	case Info:
		return 1
	}
	return 0
}

// AtLeast reports whether s is as serious as t or more.
func (s Severity) AtLeast(t Severity) bool { return s.rank() >= t.rank() && s.rank() > 0 }

// ParseSeverity reads "error", "warning" or "info" (any case).
func ParseSeverity(s string) (Severity, error) {
	switch sev := Severity(strings.ToLower(strings.TrimSpace(s))); sev {
	case Error, Warning, Info:
		return sev, nil
	}
	return "", fmt.Errorf("unknown severity %q (want error, warning or info)", s)
}

// Rule describes one kind of finding. Its ID never changes once released:
// scripts, SARIF consumers and code-scanning services key on it.
type Rule struct {
	// ID is the stable identifier printed in brackets, e.g. "secret-leak".
	ID string
	// Severity is the rule's severity (every finding of the rule has it).
	Severity Severity
	// Title is a short name for tables and code-scanning alerts.
	Title string
	// Finds says in one sentence what the rule reports.
	Finds string
	// Fix says in one sentence how to fix a finding.
	Fix string
	// Checklist is the item of the tool author's pre-flight checklist the
	// rule checks, empty for rules about files and the inventory.
	Checklist string
}

// Rules is the rule table: the checklist rules of this package first, then
// the rules of the reader, discovery and the inventory that `lcp check`
// reports through the same output. docs/check.md documents every entry.
var Rules = []Rule{
	{ID: "secret-leak", Severity: Error, Title: "Secret reaches the model or a log",
		Finds:     "a secret (a parameter or variable named like a key, token, password or secret, or the answer to a secret question) flows unmasked into the result the model reads (output, error, prompt_injection or any payload key), an exception message, print or a logging call",
		Fix:       "mask the value before it leaves the tool (for example '***' + key[-4:]) or leave it out of the result and the logs",
		Checklist: "Secrets never appear in output, prompt_injection, or logs — mask them."},
	{ID: "path-escape", Severity: Warning, Title: "Parameter path used without a workspace check",
		Finds:     "a path built from a tool parameter is opened, listed, written or removed (open, pathlib, os.*, shutil.*) with no containment check on the way",
		Fix:       "resolve the path and check it is inside the workspace (Path(p).resolve().is_relative_to(Path.cwd().resolve()), relative_to or os.path.commonpath) and refuse it otherwise",
		Checklist: "File access stays inside the workspace (resolve paths against CWD, reject escapes)."},
	{ID: "noncanonical-return", Severity: Warning, Title: "Result not in the canonical shape",
		Finds:     "a return (or the end of the function) on some branch gives something other than {\"success\": ..., \"output\"/\"error\": ...}, including the branch where a question was cancelled",
		Fix:       "return {\"success\": True, \"output\": ...} on success and {\"success\": False, \"error\": ...} on failure, on every branch",
		Checklist: "Returns {\"success\": ..., \"output\"/\"error\": ...} in every branch, including cancellation."},
	{ID: "uncoerced-parameter", Severity: Warning, Title: "Numeric or boolean parameter used without coercion",
		Finds:     "a parameter used as a number or a boolean whose annotation is missing or loose, so the schema tells the model it is a string and the engine does not convert it, is used before any int()/float()/bool()/isinstance() coercion",
		Fix:       "annotate the parameter (int, float or bool) or coerce it first, e.g. count = int(count) if isinstance(count, str) else count",
		Checklist: "Numeric/bool params coerce string inputs defensively."},
	{ID: "unchecked-answer", Severity: Warning, Title: "Question answer used without a None check",
		Finds:     "the answer to a user question (None when the user cancelled) is used before it is checked",
		Fix:       "check the answer first: if answer is None: return {\"success\": False, \"error\": \"Cancelled by user.\"}",
		Checklist: "User questions go through _ask_user; None answers abort cleanly."},
	{ID: "risky-pattern", Severity: Warning, Title: "Sensitive step without the operator's approval",
		Finds:     "a tool spawns a process, runs code, deletes files or uses the network before asking the confirm handler in the same function (or, for a library where no step can be tied to a tool, the library never uses the confirm handler)",
		Fix:       "ask first: decision, reason = _CONFIRM_HANDLER(source, label); return an error unless decision is 'allow' or 'always'",
		Checklist: "Sensitive steps gated behind _CONFIRM_HANDLER with a clear script label."},
	{ID: "vague-description", Severity: Warning, Title: "Description cannot tell the model when to use the tool",
		Finds:     "a tool's first docstring paragraph is missing or shorter than four words",
		Fix:       "start the docstring with a sentence saying what the tool does and when to use it",
		Checklist: "First docstring paragraph tells the LLM when to use the tool."},
	{ID: "undocumented-parameter", Severity: Info, Title: "Parameter without a docstring line",
		Finds:     "a parameter the model sees has no line in the docstring's Args: block",
		Fix:       "add a line 'name (type): description' for it under Args:",
		Checklist: "Every parameter documented in Args: with name (type): description."},
	{ID: "syntax-error", Severity: Error, Title: "File is not valid Python",
		Finds: "the file does not parse as Python 3.12; its tools are read by the lossy fallback extractor",
		Fix:   "fix the syntax error at the position shown (python3 -m py_compile FILE shows the same error)"},
	{ID: "regex-fallback", Severity: Info, Title: "Tools read by the fallback extractor",
		Finds: "tools of a file that does not parse were read line by line, so their schemas are approximate",
		Fix:   "fix the file's syntax error so that the reader can parse it"},
	{ID: "nested-tool", Severity: Warning, Title: "Tool defined inside a function or class",
		Finds: "a tool_* function is defined inside a function or class, so it is not a module attribute and cannot be called",
		Fix:   "move the function to the module's top level, or rename it without the tool_ prefix"},
	{ID: "orphan-prompt", Severity: Warning, Title: "Prompt function without its tool",
		Finds: "a tool_<name>_prompt function has no tool tool_<name> in its file and is not the library prompt tool_<stem>_prompt",
		Fix:   "rename it after the tool it describes, or after the file's stem for a library prompt"},
	{ID: "bad-annotations", Severity: Warning, Title: "TOOL_ANNOTATIONS cannot be read",
		Finds: "the module's TOOL_ANNOTATIONS is not a dict literal from tool names to dict literals of hints, names a tool the file does not define, or has a hint that is unknown or not of its type (title a string, the others True or False); what is malformed is ignored",
		Fix:   "write TOOL_ANNOTATIONS = {\"tool_name\": {\"title\": \"...\", \"readOnlyHint\": True, ...}} with literals only and the hints title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint"},
	{ID: "duplicate-tool", Severity: Warning, Title: "Tool name defined twice",
		Finds: "a tool name is defined again after its first definition, which wins",
		Fix:   "rename or remove one of the two definitions"},
	{ID: "missing-folder", Severity: Error, Title: "Tools folder not found",
		Finds: "a tools folder given with --tools does not exist",
		Fix:   "correct the path given with --tools"},
	{ID: "not-a-folder", Severity: Error, Title: "Tools folder is a file",
		Finds: "a path given with --tools is not a folder",
		Fix:   "give single files with --file and folders with --tools"},
	{ID: "unreadable-folder", Severity: Warning, Title: "Folder cannot be read",
		Finds: "a tools folder or library folder cannot be listed",
		Fix:   "check the folder's permissions"},
	{ID: "missing-file", Severity: Error, Title: "Tool file not found",
		Finds: "a file given with --file does not exist",
		Fix:   "correct the path given with --file"},
	{ID: "not-a-file", Severity: Error, Title: "Tool file is a folder",
		Finds: "a path given with --file is a folder",
		Fix:   "give folders with --tools and single files with --file"},
	{ID: "unreadable-file", Severity: Warning, Title: "File cannot be read",
		Finds: "a tool file cannot be read",
		Fix:   "check the file's permissions"},
	{ID: "not-utf8", Severity: Warning, Title: "File is not UTF-8",
		Finds: "a tool file is not valid UTF-8 and is skipped",
		Fix:   "save the file as UTF-8"},
	{ID: "default-library", Severity: Error, Title: "Built-in library unavailable",
		Finds: "the built-in default library could not be extracted",
		Fix:   "check that the user cache directory (or the temporary directory) is writable"},
	{ID: "prompt-failed", Severity: Warning, Title: "Prompt function failed",
		Finds: "a dynamic prompt function raised, returned something other than a string, or took too long, so the static description stays",
		Fix:   "make tool_<name>_prompt return a string quickly and without raising"},
	{ID: "toolset-unavailable", Severity: Error, Title: "Toolset cannot list its tools",
		Finds: "a part of the inventory could not list its tools",
		Fix:   "read the message: it names the part and the cause"},
	{ID: "mcp-server-unavailable", Severity: Error, Title: "MCP server unavailable",
		Finds: "an MCP server of --mcp-config could not be started or reached",
		Fix:   "check the server's command or URL in the MCP configuration"},
}

var rulesByID = func() map[string]*Rule {
	m := make(map[string]*Rule, len(Rules))
	for i := range Rules {
		m[Rules[i].ID] = &Rules[i]
	}
	return m
}()

// LookupRule returns the rule of an id.
func LookupRule(id string) (Rule, bool) {
	r, ok := rulesByID[id]
	if !ok {
		return Rule{}, false
	}
	return *r, true
}
