package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/lcptools/lcp/autonomy"
	"github.com/lcptools/lcp/builtin/internal/proc"
	"github.com/lcptools/lcp/builtin/pyrisk"
	"github.com/lcptools/lcp/builtin/shell"
	"github.com/lcptools/lcp/builtin/workspace"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// maxScript is the largest Python source judged in safe mode.
const maxScript = 1 << 20

func (b *lib) shellTools() ([]*native.Tool, error) {
	t, err := newTool(shellLib, "tool_execute_shell_command", shellDescription(nil),
		`{"type": "object", "properties": {
  "command": {"type": "string", "description": "The shell command to run in the workspace (bash syntax)."},
  "timeout": {"type": "number", "description": "Time limit in seconds; omit for the default."},`+escalationSchema+`},
 "required": ["command"]}`, confirmOnly, changes("Run shell command", true, false, true), b.runShell)
	if err != nil {
		return nil, err
	}
	return []*native.Tool{t.DescribeWith(shellDescription)}, nil
}

func (b *lib) pythonTools() ([]*native.Tool, error) {
	code, err := newTool(pythonLib, "tool_execute_python_code", pythonDescription(nil, false),
		`{"type": "object", "properties": {
  "code": {"type": "string", "description": "The Python code to run; print what you want to see."},
  "timeout": {"type": "number", "description": "Time limit in seconds; omit for the default."},`+escalationSchema+`},
 "required": ["code"]}`, confirmOnly, changes("Run Python code", true, false, true), b.runPythonCode)
	if err != nil {
		return nil, err
	}
	file, err := newTool(pythonLib, "tool_execute_python_file", pythonDescription(nil, true),
		`{"type": "object", "properties": {
  "file_name": {"type": "string", "description": "Path of the Python script, relative to the workspace."},
  "args": {"type": "array", "items": {"type": "string"}, "description": "Command-line arguments for the script, one string each (sys.argv[1:]).", "default": []},
  "timeout": {"type": "number", "description": "Time limit in seconds; omit for the default."},`+escalationSchema+`},
 "required": ["file_name"]}`, confirmOnly, changes("Run Python script", true, false, true), b.runPythonFile)
	if err != nil {
		return nil, err
	}
	return []*native.Tool{
		code.DescribeWith(func(cfg map[string]any) string { return pythonDescription(cfg, false) }),
		file.DescribeWith(func(cfg map[string]any) string { return pythonDescription(cfg, true) }),
	}, nil
}

func limitsText(cfg map[string]any) string {
	return fmt.Sprintf("The time limit is %s (the timeout argument may change it, up to %s); long output keeps its beginning and end.",
		configDuration(cfg, "timeout", DefaultTimeout), configDuration(cfg, "max_timeout", DefaultMaxTimeout))
}

// shellDescription is the description of tool_execute_shell_command for
// the library's configuration: it tells the LLM the autonomy level and the
// system (the Go form of tool_execute_shell_command_prompt).
func shellDescription(cfg map[string]any) string {
	sh, _ := shell.Program("")
	var level string
	switch {
	case autonomy.FromConfig(cfg) == autonomy.FullAccess:
		level = "full_access: commands run without approval."
	case sandboxOn(cfg) && autonomy.FromConfig(cfg) == autonomy.Safe:
		level = "safe: commands run directly in a sandbox: " + sandboxText
	case autonomy.FromConfig(cfg) == autonomy.Safe:
		level = "safe: read-only commands (ls, cat, grep, find, git status/log/diff, ...) and new files inside the workspace run directly; " +
			"commands that delete or overwrite files, write outside the workspace, use the network, start shells or interpreters, or escalate privileges wait for the operator's approval."
	case sandboxOn(cfg):
		level = "strict: the operator approves every command before it runs, in a sandbox where the workspace is writable (not .git), the system read-only, the home folder hidden and the network off unless approved."
	default:
		level = "strict: the operator approves every command before it runs."
	}
	return fmt.Sprintf("Executes a shell command with %s in the workspace on %s/%s and returns its stdout, stderr and return_code. %s Autonomy level %s "+
		"A rejected command returns the operator's reason: adapt to it instead of retrying the same command.",
		filepath.Base(sh), runtime.GOOS, runtime.GOARCH, limitsText(cfg), level)
}

func pythonDescription(cfg map[string]any, file bool) string {
	what := "Runs Python code in the workspace (its working directory) and returns what it prints (stdout, stderr) and its return_code."
	if file {
		what = "Runs a Python script of the workspace with command-line arguments and returns what it prints (stdout, stderr) and its return_code."
	}
	var level string
	switch {
	case autonomy.FromConfig(cfg) == autonomy.FullAccess:
		level = "full_access: code runs without approval."
	case sandboxOn(cfg) && autonomy.FromConfig(cfg) == autonomy.Safe:
		level = "safe: code runs directly in a sandbox: " + sandboxText
	case autonomy.FromConfig(cfg) == autonomy.Safe:
		level = "safe: code that only reads runs directly; code that writes or deletes files, starts processes or shells (subprocess, os.system, multiprocessing, ...) waits for the operator's approval."
	case sandboxOn(cfg):
		level = "strict: the operator approves every run, in a sandbox where the workspace is writable (not .git), the system read-only, the home folder hidden and the network off unless approved."
	default:
		level = "strict: the operator approves every run."
	}
	return fmt.Sprintf("%s Plots should be saved to files (matplotlib uses the Agg backend). %s Autonomy level %s", what, limitsText(cfg), level)
}

// sandboxText describes the sandbox of safe mode to the LLM.
const sandboxText = "the workspace is copy-on-write (new files are kept at once; changes to existing files, deletions and anything under .git wait for the operator's approval after the run), " +
	"the system is read-only, the home folder is hidden, /tmp is private and there is no network. " +
	"Set network=true to ask the operator for the network, or unsandboxed=true to ask to run outside the sandbox (writes outside the workspace, system changes)."

type shellArgs struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout"`
	escalation
}

func (b *lib) runShell(ctx context.Context, in shellArgs) (map[string]any, error) {
	if strings.TrimSpace(in.Command) == "" {
		return failure("The command is empty.", nil), nil
	}
	dir := b.workspaceDir(ctx)
	v := shell.Classify(in.Command, &shell.Options{Workspace: dir, Python: b.pythonJudge(ctx, dir)})
	prog, args := shell.Program(in.Command)
	cfg := call(ctx).Config
	return b.run(ctx, &job{what: "Command", label: "Run a shell command", source: in.Command,
		payload: map[string]any{"command": in.Command},
		spec: proc.Spec{Path: prog, Args: args, Dir: dir,
			Timeout: timeLimit(cfg, in.Timeout), MaxOutput: configInt(cfg, "max_output_bytes", DefaultMaxOutput)},
		reasons: v.Reasons, needs: v.Needs, asked: in.escalation, safeEnv: shell.SafeEnv})
}

// execute runs a process on the host and shapes its outcome as an LCP
// result.
func (b *lib) execute(ctx context.Context, spec proc.Spec, what string, payload map[string]any) (map[string]any, error) {
	out, err := proc.Run(ctx, spec)
	if err != nil {
		if errors.Is(err, proc.ErrNotFound) {
			return failure(fmt.Sprintf("%s could not start: %s was not found.", what, spec.Path), payload), nil
		}
		return failure(fmt.Sprintf("%s could not start: %v", what, err), payload), nil
	}
	if out.Canceled {
		return nil, tool.ContextError(ctx, call(ctx).Tool)
	}
	return shape(out, spec, what, payload), nil
}

// shape turns a process's outcome into an LCP result.
func shape(out *proc.Outcome, spec proc.Spec, what string, payload map[string]any) map[string]any {
	res := map[string]any{
		"stdout":           out.Stdout.Text,
		"stderr":           out.Stderr.Text,
		"return_code":      out.ExitCode,
		"duration_seconds": float64(out.Duration.Milliseconds()) / 1000,
	}
	for k, v := range payload {
		res[k] = v
	}
	if out.Stdout.Cut > 0 || out.Stderr.Cut > 0 {
		res["truncated"] = true
	}
	text := out.Stdout.Text
	if out.Stderr.Text != "" {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += "[stderr]\n" + out.Stderr.Text
	}
	if text == "" {
		text = "(no output)"
	}
	res["output"] = text
	switch {
	case out.TimedOut:
		res["success"] = false
		res["timed_out"] = true
		res["error"] = fmt.Sprintf("%s timed out after %s; its process group was killed.%s", what, spec.Timeout, tail(out.Stderr.Text))
	case out.ExitCode != 0:
		res["success"] = false
		res["error"] = fmt.Sprintf("%s %s.%s", what, out, tail(out.Stderr.Text))
	default:
		res["success"] = true
	}
	return res
}

// tail is the end of stderr for an error message.
func tail(stderr string) string {
	s := strings.TrimSpace(stderr)
	if s == "" {
		return ""
	}
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
		for i := 0; i < len(s) && !utf8RuneStart(s[i]); i++ {
			s = s[:i] + s[i+1:]
		}
	}
	return "\n" + s
}

// python returns the interpreter to run, or a failure text.
func (b *lib) python(ctx context.Context) (string, string) {
	name := call(ctx).ConfigString("python")
	if name == "" {
		name = b.opts.Python
	}
	if name == "" {
		name = "python3"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Sprintf("No Python interpreter: '%s' was not found (%v). Install Python 3, or set the interpreter in host_tool_configs.execute_python.python.", name, err)
	}
	return p, ""
}

// withPythonEnv adds the settings every Python run gets unless the
// environment has its own.
func withPythonEnv(env []string) []string {
	env = slices.Clone(env)
	set := func(k, v string) {
		for _, kv := range env {
			if strings.HasPrefix(kv, k+"=") {
				return
			}
		}
		env = append(env, k+"="+v)
	}
	set("MPLBACKEND", "Agg")
	set("PYTHONUNBUFFERED", "1")
	set("PYTHONIOENCODING", "utf-8")
	return env
}

// moduleFinder returns the pyrisk hook that finds local modules in the
// given directories of the workspace (the script's directory, then the
// workspace itself), read through the workspace's confinement.
func moduleFinder(ws *workspace.Workspace, dirs ...string) func(string) ([]byte, bool) {
	return func(name string) ([]byte, bool) {
		rel := strings.ReplaceAll(name, ".", "/")
		for _, d := range dirs {
			for _, cand := range []string{rel + ".py", rel + "/__init__.py"} {
				p := filepath.Join(d, filepath.FromSlash(cand))
				if src, err := ws.ReadFile(p, maxScript); err == nil {
					return src, true
				}
			}
		}
		return nil, false
	}
}

type pyCodeArgs struct {
	Code    string   `json:"code"`
	Timeout *float64 `json:"timeout"`
	escalation
}

func (b *lib) runPythonCode(ctx context.Context, in pyCodeArgs) (map[string]any, error) {
	if strings.TrimSpace(in.Code) == "" {
		return failure("The code is empty.", nil), nil
	}
	interp, msg := b.python(ctx)
	if msg != "" {
		return failure(msg, nil), nil
	}
	dir := b.workspaceDir(ctx)
	ws, err := workspace.Open(dir)
	if err != nil {
		return failure(err.Error(), nil), nil
	}
	v := pyrisk.Classify(in.Code, &pyrisk.Options{Module: moduleFinder(ws, "."), Workspace: ws.Dir()})
	ws.Close()
	cfg := call(ctx).Config
	j := &job{what: "Python", label: "Run Python code", source: in.Code,
		spec: proc.Spec{Path: interp, Args: []string{"-"}, Stdin: strings.NewReader(in.Code), Dir: dir,
			Timeout: timeLimit(cfg, in.Timeout), MaxOutput: configInt(cfg, "max_output_bytes", DefaultMaxOutput)},
		asked: in.escalation}
	b.pythonJob(ctx, j, interp, v, dir, dir)
	return b.run(ctx, j)
}

type pyFileArgs struct {
	FileName string   `json:"file_name"`
	Args     []string `json:"args"`
	Timeout  *float64 `json:"timeout"`
	escalation
}

func (b *lib) runPythonFile(ctx context.Context, in pyFileArgs) (map[string]any, error) {
	interp, msg := b.python(ctx)
	if msg != "" {
		return failure(msg, nil), nil
	}
	dir := b.workspaceDir(ctx)
	ws, err := workspace.Open(dir)
	if err != nil {
		return failure(err.Error(), nil), nil
	}
	defer ws.Close()
	rel, err := ws.Rel(in.FileName)
	if err != nil {
		return failure(pathError(err), nil), nil
	}
	shown := ws.Display(in.FileName)
	payload := map[string]any{"file_name": shown}
	var v pyrisk.Verdict
	src, err := ws.ReadFile(rel, maxScript)
	switch {
	case errors.Is(err, workspace.ErrTooLarge):
		v = pyrisk.Verdict{Risky: true, Reasons: []string{fmt.Sprintf("the script is larger than %d bytes and is not judged", maxScript)}}
	case err != nil:
		return failure(pathError(err), payload), nil
	default:
		v = pyrisk.Classify(string(src), &pyrisk.Options{Module: moduleFinder(ws, filepath.Dir(rel), "."), Workspace: ws.Dir()})
	}
	argv := append([]string{filepath.Base(interp), shown}, in.Args...)
	cfg := call(ctx).Config
	abs := filepath.Join(ws.Dir(), rel)
	j := &job{what: "Python", label: "Run Python script " + shown, source: strings.Join(argv, " ") + "\n\n" + string(src),
		payload: payload,
		spec: proc.Spec{Path: interp, Args: append([]string{abs}, in.Args...), Dir: dir,
			Timeout: timeLimit(cfg, in.Timeout), MaxOutput: configInt(cfg, "max_output_bytes", DefaultMaxOutput)},
		asked: in.escalation}
	b.pythonJob(ctx, j, interp, v, ws.Dir(), filepath.Dir(abs))
	return b.run(ctx, j)
}

// pythonJob completes a Python job: the classifier's verdict, and what the
// sandbox needs to run the interpreter (its real program and prefix, not
// a shim in the hidden home folder). first is the folder Python puts
// first on sys.path (the working folder for code, the script's folder).
func (b *lib) pythonJob(ctx context.Context, j *job, interp string, v pyrisk.Verdict, ws, first string) {
	// Without a sandbox, safe mode asks before anything not proven
	// harmless: code that writes files, reads credentials or uses the
	// network too, and code that would import a workspace file in place
	// of a standard module (the classifier judges only what the code
	// imports itself, not what the standard library imports in turn).
	j.reasons, j.needs = slices.Concat(v.Reasons, v.Writes, v.Reads, shadowReasons(ws, first)), v.Needs
	for _, p := range v.Needs {
		j.reasons = append(j.reasons, p.Reason)
	}
	j.hostEnv = func() []string { return withPythonEnv(os.Environ()) }
	j.extraEnv = []string{"MPLBACKEND=Agg", "PYTHONUNBUFFERED=1", "PYTHONIOENCODING=utf-8"}
	j.safeEnv = shell.SafeEnv
	if sandboxOn(call(ctx).Config) {
		j.program, j.readPaths = sandbox.Python(interp)
	}
}

// shadowReasons are the reasons to ask when a folder Python searches
// before the standard library (first, or a PYTHONPATH entry in the
// workspace ws) holds a module or package named like a standard module, a
// sitecustomize or a usercustomize: Python would run that file, unjudged,
// whatever the code imports (import json imports re, ...).
func shadowReasons(ws, first string) []string {
	found, err := sandbox.PythonPathShadows(ws, first, os.Getenv("PYTHONPATH"))
	if err != nil {
		return []string{fmt.Sprintf("the folders on Python's path could not be checked for modules shadowing the standard library (%v)", err)}
	}
	out := make([]string, 0, len(found))
	for _, f := range found {
		out = append(out, fmt.Sprintf("the workspace holds %s, which Python imports in place of the standard module %s (directly or through another standard module); it is not judged", f, shadowModule(f)))
	}
	return out
}

// shadowModule is the module a shadow found by sandbox.PythonPathShadows
// stands for: its last element up to the first dot.
func shadowModule(f string) string {
	name := path.Base(strings.TrimSuffix(f, "/"))
	name, _, _ = strings.Cut(name, ".")
	return name
}

// pythonJudge judges Python code a shell command runs (python3 -c,
// python3 SCRIPT.py) with pyrisk, as tool_execute_python_code's code is
// judged without a sandbox: every reason, write, credential read and
// network use counts. Local modules are looked up in dir, then in the
// working folder.
func (b *lib) pythonJudge(ctx context.Context, dir string) func(code, from string) []string {
	return func(code, from string) []string {
		ws, err := workspace.Open(dir)
		if err != nil {
			return []string{err.Error()}
		}
		defer ws.Close()
		rel, err := filepath.Rel(ws.Dir(), from)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return []string{"the code's folder is outside the workspace"}
		}
		v := pyrisk.Classify(code, &pyrisk.Options{Module: moduleFinder(ws, rel, "."), Workspace: ws.Dir()})
		out := slices.Concat(v.Reasons, v.Writes, v.Reads)
		for _, p := range v.Needs {
			out = append(out, p.Reason)
		}
		return out
	}
}
