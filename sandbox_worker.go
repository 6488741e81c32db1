package lcp

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/lcptools/lcp/autonomy"
	"github.com/lcptools/lcp/egress"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

// workerEnv are the variables of a worker's own environment that reach
// it inside a sandbox, beside the sandbox's allow-list.
var workerEnv = []string{"MALLOC_ARENA_MAX", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING"}

// sandboxMode says whether the worker of the library stem runs in the
// kernel sandbox, and how: its host configuration's "sandbox" setting,
// else Config.Sandbox.
func (e *Engine) sandboxMode(stem string) (set sandbox.Settings, mode sandbox.Mode, boxed bool, err error) {
	set, err = sandbox.ReadSettings(e.cfg.HostToolConfigs[stem])
	if err != nil {
		return set, mode, false, fmt.Errorf("library %s: %w", stem, err)
	}
	switch set.Setting {
	case sandbox.SettingReadOnly:
		return set, sandbox.ReadOnly, true, nil
	case sandbox.SettingWorkspaceWrite, sandbox.SettingOn:
		return set, sandbox.Write, true, nil
	case sandbox.SettingOff:
		return set, mode, false, nil
	}
	return set, sandbox.Write, e.cfg.Sandbox, nil
}

// sandboxed reports whether the worker of the library stem runs in the
// kernel sandbox.
func (e *Engine) sandboxed(stem string) (bool, error) {
	_, _, boxed, err := e.sandboxMode(stem)
	return boxed, err
}

// wrapWorker runs the worker of a Python tool library inside the kernel
// sandbox when its host configuration asks for it (sandbox:
// "workspace-write" or "read-only") or Config.Sandbox does for all. Other
// libraries run as they are: they are the user's own, trusted code.
func (e *Engine) wrapWorker(cmd *exec.Cmd, lib worker.Library, ws string, calls func() []context.Context) (worker.Wrapped, error) {
	stem := lib.Stem
	if stem == "" {
		stem = strings.TrimSuffix(filepath.Base(lib.Path), ".py")
	}
	set, mode, boxed, err := e.sandboxMode(stem)
	if err != nil {
		return worker.Wrapped{}, err
	}
	if !boxed {
		return worker.Wrapped{}, nil
	}
	program, paths := sandbox.Python(cmd.Path)
	// Python finds its prefix from argv[0]: a bare name would be looked up
	// in the sandbox's PATH, where a shim's folder may be hidden.
	cmd.Path = program
	if len(cmd.Args) > 0 {
		cmd.Args[0] = program
	}
	if lib.Code == "" && lib.Path != "" {
		paths = append(paths, filepath.Dir(lib.Path))
	}
	var extra []string
	for _, kv := range cmd.Env {
		k, _, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(k, "LCP_") || slices.Contains(workerEnv, k)) && !sandbox.IsSecretName(k) {
			extra = append(extra, kv)
		}
	}
	pol := set.Policy(ws, mode, extra, paths)
	pol.Limits = pol.Limits.Budget(e.cfg.SandboxBudget)
	var proxy *egress.Proxy
	if !pol.Network {
		proxy = egress.New(&egress.Options{Allow: set.Allow, Ask: e.askEgress(stem, calls), OnDeny: e.egressDenied(stem, calls), Logger: e.cfg.Logger})
		pol.Egress = proxy.ServeConn
	}
	box, err := sandbox.Wrap(cmd, pol)
	if err != nil {
		if proxy != nil {
			proxy.Close()
		}
		return worker.Wrapped{}, fmt.Errorf("library %s: %w", stem, err)
	}
	if mode == sandbox.Write {
		e.kept.Store(stem+"\x00"+ws, box.KeptReadOnly())
	}
	// A worker writes its workspace directly: the box holds nothing to
	// read back once the process runs; its proxy serves it while it lives.
	// The disk budget of a workspace-write worker bounds what each call
	// writes (from its start to its result), not the worker's whole life.
	w := worker.Wrapped{CallStarted: box.BeginUnit, CallEnded: func() error {
		if err := box.EndUnit(); err != nil {
			return fmt.Errorf("library %s: %w", stem, err)
		}
		return nil
	}}
	w.Started = func() {
		box.Started()
		go func() {
			<-box.Ended()
			if proxy != nil {
				proxy.Close()
			}
			// The pool sees a worker that died; the log says why.
			if rep := box.Report(); rep.Exceeded != "" && e.cfg.Logger != nil {
				e.cfg.Logger.Warn("the sandboxed worker went over its budget and was ended", "library", stem, "budget", rep.BudgetText())
			}
		}()
		box.Close()
	}
	return w, nil
}

// askEgress is who decides a connection of a boxed library's worker to a
// host its network list does not name: in safe and strict, the person,
// through the only call in flight on the worker (a confirmation of that
// call, "allow once" lasting for the call), else Config.Respond; in
// full_access nobody is asked and the list alone decides.
func (e *Engine) askEgress(stem string, calls func() []context.Context) func(context.Context, string, int) bool {
	var mu sync.Mutex
	perCall := map[*tool.CallRequest]*egress.Confirmer{}
	return func(ctx context.Context, host string, port int) bool {
		if autonomy.FromConfig(e.cfg.HostToolConfigs[stem]) == autonomy.FullAccess {
			return false
		}
		if cs := calls(); len(cs) == 1 {
			if c := tool.CallFromContext(cs[0]); c != nil {
				mu.Lock()
				conf := perCall[c]
				if conf == nil {
					conf = &egress.Confirmer{}
					perCall[c] = conf
					context.AfterFunc(cs[0], func() { mu.Lock(); delete(perCall, c); mu.Unlock() })
				}
				mu.Unlock()
				return conf.Ask(cs[0], fmt.Sprintf("%s (library %s, in its sandbox)", c.Tool, stem), host, port)
			}
		}
		if !e.canRespond(tool.KindConfirm) {
			return false
		}
		label := egress.ConfirmLabel(host, port)
		resp := e.respond(ctx, &tool.Request{ID: tool.NewID(), Tool: stem, Library: stem, Kind: tool.KindConfirm, Label: label, Title: label,
			Source: fmt.Sprintf("The worker of library %s (in its sandbox) wants to reach %s:%d, which its network list does not name.", stem, host, port)})
		if resp.Action != tool.Submit {
			return false
		}
		d, _ := resp.Value.(tool.Decision)
		if s, ok := resp.Value.(string); ok {
			d = tool.Decision(s)
		}
		return d == tool.Allow || d == tool.Always
	}
}

// egressDenied shows a refused connection of a boxed worker in the
// events of the only call in flight, else to Config.OnEvent.
func (e *Engine) egressDenied(stem string, calls func() []context.Context) func(egress.Denial) {
	return func(d egress.Denial) {
		ev := d.Event()
		if cs := calls(); len(cs) == 1 {
			if c := tool.CallFromContext(cs[0]); c != nil {
				c.Emit(ev) // the engine's subscriber is among the call's
				return
			}
		}
		ev.Library = stem
		if e.cfg.OnEvent != nil {
			e.cfg.OnEvent(ev)
		}
	}
}

// maxKeptLines is how many read-only paths a confirmation lists.
const maxKeptLines = 8

// confirmNote is the note of every confirmation a call of a sandboxed
// library asks (binding.Options.ConfirmNote): where its worker runs, and
// for a workspace-write library what the sandbox keeps read-only, so
// that the person knows what an approval lets the library change. The
// list is the one the running worker's sandbox was planned with; before
// a worker has started, the workspace's current one.
func (e *Engine) confirmNote(stem, ws string) string {
	set, mode, boxed, err := e.sandboxMode(stem)
	if err != nil || !boxed {
		return ""
	}
	net := networkText(set)
	if mode == sandbox.ReadOnly {
		return fmt.Sprintf("The library %s runs in the sandbox: the workspace read-only, %s.", stem, net)
	}
	var kept []string
	if v, ok := e.kept.Load(stem + "\x00" + ws); ok {
		kept = v.([]string)
	} else if kept, err = sandbox.KeptReadOnly(ws); err != nil {
		return fmt.Sprintf("The library %s runs in the sandbox, writing the workspace directly; %v, so its worker does not start.", stem, err)
	}
	note := fmt.Sprintf("The library %s runs in the sandbox, writing the workspace directly (%s).", stem, net)
	if len(kept) == 0 {
		return note + " The workspace holds no version control folder or git file to keep read-only."
	}
	if len(kept) > maxKeptLines {
		kept = append(kept[:maxKeptLines:maxKeptLines], fmt.Sprintf("and %d more", len(kept)-maxKeptLines))
	}
	return note + " Kept read-only:\n- " + strings.Join(kept, "\n- ")
}
