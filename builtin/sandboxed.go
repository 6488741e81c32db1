package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/lcptools/lcp/autonomy"
	"github.com/lcptools/lcp/builtin/internal/proc"
	"github.com/lcptools/lcp/egress"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// job is one command or Python run of a tool, with what the autonomy
// level needs to decide how it runs.
type job struct {
	what    string // "Command" or "Python", for messages
	label   string // the confirmation's label
	source  string // what the operator is shown
	payload map[string]any
	spec    proc.Spec // Env is set by run
	// reasons are why safe mode asks when there is no sandbox (nil: the
	// run is judged harmless there).
	reasons []string
	// needs are the permissions beyond the sandbox the classifier found;
	// asked are those the model asked for.
	needs []sandbox.Permission
	asked escalation
	// hostEnv is the environment of a run on the host (default: lcp's);
	// safeEnv prepares it for a run safe mode lets through without a
	// sandbox and without asking.
	hostEnv func() []string
	safeEnv func([]string) []string
	// In the sandbox: more environment (KEY=VALUE), more read-only paths
	// (an interpreter's prefix), and the program to run instead of
	// spec.Path (the real interpreter behind a shim).
	extraEnv  []string
	readPaths []string
	program   string
}

// escalation is what the model may ask for beyond the sandbox, through
// the tools' arguments.
type escalation struct {
	Network     *bool `json:"network"`
	Unsandboxed *bool `json:"unsandboxed"`
}

func (e escalation) permissions() []sandbox.Permission {
	var out []sandbox.Permission
	if e.Network != nil && *e.Network {
		out = append(out, sandbox.Permission{Kind: sandbox.Network, Reason: "the model asks for network access"})
	}
	if e.Unsandboxed != nil && *e.Unsandboxed {
		out = append(out, sandbox.Permission{Kind: sandbox.Unsandboxed, Reason: "the model asks to run outside the sandbox"})
	}
	return out
}

// escalationSchema are the tool arguments of escalation.
const escalationSchema = `
  "network": {"type": "boolean", "description": "Ask the operator for network access for this run (the sandbox has none otherwise)."},
  "unsandboxed": {"type": "boolean", "description": "Ask the operator to run this outside the sandbox, with full access to the machine: only to write outside the workspace or change the system."}`

// sandboxOn reports whether runs of a library with this configuration go
// to the sandbox (strict and safe, unless switched off or unavailable).
// It is for descriptions, so it does not run the probe: a machine that
// fails it still refuses to run anything unsandboxed in the sandbox's
// place.
func sandboxOn(cfg map[string]any) bool {
	if autonomy.FromConfig(cfg) == autonomy.FullAccess {
		return false
	}
	set, err := sandbox.ReadSettings(cfg)
	if err == nil && set.Setting == sandbox.SettingOff {
		return false
	}
	return sandbox.Supported()
}

// run runs a job as the autonomy level says: full_access on the host as
// it is; strict and safe in the sandbox when this machine has one (asking
// only for permissions beyond it in safe, before every run in strict),
// else on the host after the classifiers' judgement.
func (b *lib) run(ctx context.Context, j *job) (map[string]any, error) {
	level := call(ctx).Autonomy
	if j.hostEnv == nil {
		j.hostEnv = os.Environ
	}
	if level == autonomy.FullAccess {
		j.spec.Env = j.hostEnv()
		return b.execute(ctx, j.spec, j.what, j.payload)
	}
	set, err := sandbox.ReadSettings(call(ctx).Config)
	if err != nil {
		return failure(fmt.Sprintf("%s did not run: the sandbox configuration is invalid: %v", j.what, err), j.payload), nil
	}
	if set.Setting == sandbox.SettingOff || !sandbox.Probe().Available {
		return b.runOnHost(ctx, j, level)
	}
	return b.runSandboxed(ctx, j, level, set)
}

// runOnHost is the path of machines without a sandbox: safe asks before
// anything the classifiers do not prove harmless.
func (b *lib) runOnHost(ctx context.Context, j *job, level autonomy.Level) (map[string]any, error) {
	risky := len(j.reasons) > 0
	if msg, err := approve(ctx, risky, j.label, j.source, j.reasons); err != nil || msg != "" {
		return failure(msg, j.payload), err
	}
	j.spec.Env = j.hostEnv()
	if !risky && level == autonomy.Safe && j.safeEnv != nil {
		j.spec.Env = j.safeEnv(j.spec.Env)
	}
	return b.execute(ctx, j.spec, j.what, j.payload)
}

// runSandboxed runs a job in the sandbox: copy-on-write in safe (its
// changes to existing files wait for the operator), writing the workspace
// directly in strict (where the operator approved the run itself).
func (b *lib) runSandboxed(ctx context.Context, j *job, level autonomy.Level, set sandbox.Settings) (map[string]any, error) {
	mode := sandbox.CopyOnWrite
	if level != autonomy.Safe {
		mode = sandbox.Write
	}
	needs := append(slices.Clone(j.needs), j.asked.permissions()...)
	if mode == sandbox.CopyOnWrite {
		// .git is part of the change set there.
		needs = slices.DeleteFunc(needs, func(p sandbox.Permission) bool { return p.Kind == sandbox.WriteVCS })
	}
	if set.Network || set.Allow != nil {
		// With a network list, the proxy decides at run time: listed hosts
		// pass, others are asked for then.
		needs = slices.DeleteFunc(needs, func(p sandbox.Permission) bool { return p.Kind == sandbox.Network })
	}
	if level != autonomy.Safe || len(needs) > 0 {
		if msg, err := b.approveEscalation(ctx, j, level, needs); err != nil || msg != "" {
			return failure(msg, j.payload), err
		}
	}
	if slices.ContainsFunc(needs, func(p sandbox.Permission) bool { return p.Kind == sandbox.Unsandboxed }) {
		j.spec.Env = j.hostEnv()
		return b.execute(ctx, j.spec, j.what, j.payload)
	}
	pol := set.Policy(b.workspaceDir(ctx), mode, j.extraEnv, j.readPaths)
	for _, p := range needs {
		switch p.Kind {
		case sandbox.Network:
			pol.Network = true
		case sandbox.WritePath:
			pol.WritePaths = append(pol.WritePaths, p.Path)
		case sandbox.WriteVCS:
			pol.WritableVCS = true
		}
	}
	if !pol.Network {
		// The run's only way out is the egress proxy: the hosts of the
		// library's network list, and those the person allows when asked.
		var asked egress.Confirmer
		proxy := egress.New(&egress.Options{Allow: set.Allow,
			Ask: func(_ context.Context, host string, port int) bool {
				return asked.Ask(ctx, call(ctx).Tool, host, port)
			},
			OnDeny: func(d egress.Denial) {
				if c := tool.CallFromContext(ctx); c.Listening() {
					c.Emit(d.Event())
				}
			}})
		defer proxy.Close()
		pol.Egress = proxy.ServeConn
	}
	spec := j.spec
	if j.program != "" {
		spec.Path = j.program
	}
	var box *sandbox.Box
	spec.Wrap = func(cmd *exec.Cmd) (proc.Wrapped, error) {
		bx, err := sandbox.Wrap(cmd, pol)
		if err != nil {
			return proc.Wrapped{}, err
		}
		box = bx
		return proc.Wrapped{Started: bx.Started, Ended: bx.Ended(), Exit: bx.Exit}, nil
	}
	out, err := proc.Run(ctx, spec)
	if box != nil {
		defer box.Close()
	}
	if err != nil {
		return failure(fmt.Sprintf("%s did not run: the sandbox could not be prepared: %v", j.what, err), j.payload), nil
	}
	rep := box.Report()
	if rep.SetupErr != nil {
		return failure(fmt.Sprintf("%s did not run: %v", j.what, rep.SetupErr), j.payload), nil
	}
	if out.Canceled {
		return nil, tool.ContextError(ctx, call(ctx).Tool)
	}
	res := shape(out, spec, j.what, j.payload)
	res["sandbox"] = sandboxInfo(pol, set.Allow)
	noteLimits(res, out, rep)
	noteNewRepos(res, rep)
	for _, what := range noteBlocked(res, out, pol) {
		reportDenial(ctx, what)
	}
	if mode == sandbox.CopyOnWrite {
		if why := abnormalEnd(out, rep); why != "" {
			discard(box, res, why)
		} else if err := b.commit(ctx, box, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// abnormalEnd says why a run did not end normally (its files may be
// half written), or "" when the command itself ended, with any exit code.
func abnormalEnd(out *proc.Outcome, rep *sandbox.Report) string {
	switch {
	case rep.Exceeded != "":
		return "the run went over " + rep.BudgetText()
	case out.TimedOut:
		return "the command timed out"
	case !rep.Exited:
		return "the sandbox was killed before the command ended"
	case rep.Signal != "":
		return "the command was killed by " + rep.Signal
	case out.Signal != "":
		return "the command was killed by " + out.Signal
	}
	return ""
}

// discard drops every change of a run that did not end normally, and
// says so in the result.
func discard(box *sandbox.Box, res map[string]any, why string) {
	cs, err := box.Changes(nil)
	if err != nil || cs.Empty() {
		return
	}
	lines := make([]string, 0, len(cs.Changes))
	for _, c := range cs.Changes {
		lines = append(lines, c.String())
	}
	res["workspace_changes"] = map[string]any{"discarded": lines}
	msg := "discarded, none applied (" + why + "): " + strings.Join(lines, "; ")
	out, _ := res["output"].(string)
	res["output"] = strings.TrimRight(out, "\n") + "\n[workspace changes] " + msg
	failWith(res, "The command did not end normally, so none of its changes to the workspace was applied: "+msg)
}

// approveEscalation asks the operator before a sandboxed run: in strict
// for every run, in safe for the permissions beyond the sandbox it needs.
func (b *lib) approveEscalation(ctx context.Context, j *job, level autonomy.Level, needs []sandbox.Permission) (string, error) {
	var why []string
	if level != autonomy.Safe && len(needs) == 0 {
		return approve(ctx, true, j.label, j.source, append([]string{"it runs in the sandbox (workspace writable except .git, no network)"},
			protectedNotes(b.workspaceDir(ctx))...))
	}
	grant := sandbox.Describe(needs)
	for _, p := range needs {
		why = append(why, p.Reason)
	}
	why = append(why, "approving grants this run: "+strings.Join(grant, "; "))
	// Safe mode's prompt lists these reasons; strict's says it asks always.
	return approve(ctx, true, j.label, j.source, why)
}

// protectedNotes says what of the workspace's repositories a writing run
// keeps read-only, for the confirmation (at most a few lines).
func protectedNotes(ws string) []string {
	prot, err := sandbox.Protected(ws)
	if err != nil {
		return []string{err.Error() + " (the run will not start)"}
	}
	const most = 8
	if len(prot) > most {
		prot = append(prot[:most:most], fmt.Sprintf("and %d more", len(prot)-most))
	}
	if len(prot) == 0 {
		return nil
	}
	return []string{"kept read-only: " + strings.Join(prot, "; ")}
}

func sandboxInfo(p *sandbox.Policy, allow egress.List) map[string]any {
	info := map[string]any{"workspace": p.Mode.String(), "network": p.Network}
	if !p.Network && len(allow) > 0 {
		info["network_allowed"] = allow.Strings()
	}
	if len(p.WritePaths) > 0 {
		info["write_paths"] = p.WritePaths
	}
	return info
}

// commitLabel is the label of the confirmation of a change set: the same
// for every run, so that "always" covers the library for the session.
const commitLabel = "Apply changes to existing workspace files"

// commit applies the changes of a copy-on-write run: new files, folders
// and links inside the workspace at once; changes to what existed (and
// anything under .git, links pointing out) after one confirmation.
func (b *lib) commit(ctx context.Context, box *sandbox.Box, res map[string]any) error {
	cs, err := box.Changes(b.ledger)
	if err != nil {
		failWith(res, fmt.Sprintf("The run's changes to the workspace could not be read, so none was applied: %v", err))
		return nil
	}
	if cs.Empty() {
		return nil
	}
	first := cs.Apply(func(c *sandbox.Change) bool { return !c.Risky }, b.ledger)
	report := changeReport{applied: first.Applied, conflicts: first.Conflicts, failed: first.Failed, withheld: first.Withheld}
	if risky := cs.Risky(); len(risky) > 0 {
		prompt := "The command changed existing files of the workspace (its new files are in place already). These changes wait for your approval:"
		msg, err := approve(ctx, true, commitLabel, prompt+"\n"+cs.Summary(risky), nil)
		if err != nil {
			return err
		}
		if msg == "" {
			second := cs.Apply(func(c *sandbox.Change) bool { return c.Risky }, b.ledger)
			report.applied = append(report.applied, second.Applied...)
			report.conflicts = append(report.conflicts, second.Conflicts...)
			report.failed = append(report.failed, second.Failed...)
			report.withheld = append(report.withheld, second.Withheld...)
		} else {
			report.dropped, report.why = risky, msg
		}
	}
	report.into(res)
	return nil
}

// changeReport says what happened to a run's changes, for the model.
type changeReport struct {
	applied, dropped, conflicts []sandbox.Change
	withheld                    []sandbox.Change // not applied: the set failed
	failed                      []sandbox.Failure
	why                         string // the operator's rejection
}

func (r changeReport) into(res map[string]any) {
	lines := func(cs []sandbox.Change) []string {
		out := make([]string, 0, len(cs))
		for _, c := range cs {
			out = append(out, c.String())
		}
		return out
	}
	wc := map[string]any{"applied": lines(r.applied)}
	var text []string
	if len(r.applied) > 0 {
		text = append(text, "applied: "+strings.Join(lines(r.applied), "; "))
	}
	var problems []string
	if len(r.dropped) > 0 {
		wc["dropped"] = lines(r.dropped)
		s := "not applied (" + strings.TrimSuffix(r.why, ".") + "): " + strings.Join(lines(r.dropped), "; ")
		text, problems = append(text, s), append(problems, s)
	}
	if len(r.conflicts) > 0 {
		wc["conflicts"] = lines(r.conflicts)
		s := "not applied because the workspace changed meanwhile (left as it is now): " + strings.Join(lines(r.conflicts), "; ")
		text, problems = append(text, s), append(problems, s)
	}
	if len(r.withheld) > 0 {
		wc["withheld"] = lines(r.withheld)
		s := "not applied because the set is applied whole or not at all and another change of it was not: " + strings.Join(lines(r.withheld), "; ")
		text, problems = append(text, s), append(problems, s)
	}
	if len(r.failed) > 0 {
		var fs []string
		for _, f := range r.failed {
			fs = append(fs, fmt.Sprintf("%s (%v)", f.Change, f.Err))
		}
		wc["failed"] = fs
		s := "not applied: " + strings.Join(fs, "; ")
		text, problems = append(text, s), append(problems, s)
	}
	res["workspace_changes"] = wc
	if len(text) > 0 {
		out, _ := res["output"].(string)
		res["output"] = strings.TrimRight(out, "\n") + "\n[workspace changes] " + strings.Join(text, "\n[workspace changes] ")
	}
	if len(problems) > 0 {
		failWith(res, "The command ran in the sandbox, but some of its changes to the workspace were not applied: "+strings.Join(problems, " "))
	}
}

// failWith marks a result failed, keeping an earlier error.
func failWith(res map[string]any, msg string) {
	res["success"] = false
	if prev, _ := res["error"].(string); prev != "" {
		msg = prev + "\n" + msg
	}
	res["error"] = msg
}

// noteLimits names the resource limit a run hit, from how it ended and
// what it printed.
func noteLimits(res map[string]any, out *proc.Outcome, rep *sandbox.Report) {
	l := rep.Limits
	text := out.Stderr.Text + "\n" + out.Stdout.Text
	var hit string
	switch {
	case rep.Exceeded != "":
		hit = rep.BudgetText()
	case out.Signal == "SIGXCPU" || rep.Signal == "SIGXCPU":
		hit = fmt.Sprintf("the CPU time limit (%s per process)", l.CPUTime)
	case out.Signal == "SIGXFSZ" || rep.Signal == "SIGXFSZ" || containsAny(text, "File too large", "File size limit exceeded"):
		hit = fmt.Sprintf("the file size limit (%s)", bytesText(l.FileSize))
	case strings.HasPrefix(rep.Accounting, "rlimits") && rep.PeakProcesses >= l.Processes-2 || containsAny(text, "fork: retry", "fork: Resource temporarily unavailable",
		"Cannot fork", "can't start new thread", "BlockingIOError: [Errno 11]"):
		hit = fmt.Sprintf("the process limit (%d processes and threads)", l.Processes)
	case containsAny(text, "MemoryError", "Cannot allocate memory", "xmalloc", "out of memory", "bad_alloc",
		"heap out of memory", "cannot allocate memory") || l.Memory > 0 && rep.MaxRSS >= l.Memory*8/10:
		hit = fmt.Sprintf("the memory limit (%s per process)", bytesText(l.Memory))
	}
	if hit == "" {
		return
	}
	res["limit_hit"] = hit
	if res["success"] == false {
		failWith(res, "The sandbox stopped it at "+hit+".")
	} else {
		out, _ := res["output"].(string)
		res["output"] = strings.TrimRight(out, "\n") + "\n[sandbox] it reached " + hit + "; its output may be incomplete."
	}
}

// noteNewRepos tells the model (and the user reading the call) what lcp
// disabled in the repositories the run created: their planted hooks and
// programs would otherwise run at the user's next git command.
func noteNewRepos(res map[string]any, rep *sandbox.Report) {
	if len(rep.NewRepos) == 0 {
		return
	}
	res["new_repositories"] = rep.NewRepos
	out, _ := res["output"].(string)
	var b strings.Builder
	b.WriteString(strings.TrimRight(out, "\n"))
	for _, l := range rep.NewRepos {
		b.WriteString("\n[sandbox] " + l)
	}
	res["output"] = b.String()
}

// blockedSigns are what programs print when the sandbox denies them
// something, by what it denies.
var blockedSigns = map[string][]string{
	"network": {"Network is unreachable", "Could not resolve host", "Temporary failure in name resolution",
		"Name or service not known", "getaddrinfo", "Failed to establish a new connection", "ENOTFOUND",
		"EAI_AGAIN", "No route to host", "dial tcp", "Connection refused", "Could not resolve",
		"unable to access 'http", "NewConnectionError", "nodename nor servname"},
	"filesystem": {"Read-only file system", "Permission denied", "Operation not permitted", "EROFS", "EACCES", "EPERM"},
}

// noteBlocked explains, when a run failed on something the sandbox
// denies, what it denies and how to ask for it; it returns what was
// denied ("network", "filesystem").
func noteBlocked(res map[string]any, out *proc.Outcome, p *sandbox.Policy) []string {
	if out.ExitCode == 0 {
		return nil
	}
	text := out.Stderr.Text + "\n" + out.Stdout.Text
	var hints, denied []string
	if !p.Network && containsAny(text, blockedSigns["network"]...) {
		hints = append(hints, "The sandbox has no network. If this run needs it, call again with network=true: the operator is asked.")
		denied = append(denied, "network")
	}
	if containsAny(text, blockedSigns["filesystem"]...) {
		hints = append(hints, "The sandbox shows the system read-only, hides your home folder and keeps /tmp private; only the workspace is writable"+
			vcsNote(p)+". To write elsewhere, call again with unsandboxed=true: the operator is asked.")
		denied = append(denied, "filesystem")
	}
	if len(hints) == 0 {
		return nil
	}
	res["sandbox_blocked"] = hints
	failWith(res, strings.Join(hints, " "))
	return denied
}

// SandboxDenialKey marks a log record of a call as a sandbox denial: its
// data is a JSON object with this key set to what was denied ("network",
// "filesystem"). Metrics count them (lcp_sandbox_denials_total).
const SandboxDenialKey = egress.DenialKey

// reportDenial tells the call's subscribers that the sandbox denied what.
func reportDenial(ctx context.Context, what string) {
	c := tool.CallFromContext(ctx)
	if !c.Listening() {
		return
	}
	data, _ := json.Marshal(map[string]string{SandboxDenialKey: what})
	c.Emit(tool.Event{Kind: tool.EventLog, Level: "warning", Text: "the sandbox denied " + what + " access", Data: data})
}

func vcsNote(p *sandbox.Policy) string {
	if p.Mode == sandbox.Write && !p.WritableVCS {
		return " (except .git)"
	}
	return ""
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
