// Package sandbox runs commands inside a kernel sandbox on Linux: new user,
// mount, PID, network, IPC, UTS and cgroup namespaces; a read-only view of
// the system; the home folder hidden except toolchains and caches; a
// private /tmp, /dev and /proc; the workspace read-only, writable (version
// control folders read-only) or copy-on-write; no network unless granted;
// Landlock where the kernel has it; no capabilities, no_new_privs; resource
// limits; an environment from an allow-list; and nothing surviving the
// command. Any set-up failure fails closed: the command does not run.
//
// Wrap rewrites an exec.Cmd so that starting it starts the sandbox's init
// (the binary itself, started again through /proc/self/exe and recognised
// by Main, which the binary calls first in main, or sooner by the
// sandbox/boot package that main imports), which builds the sandbox and
// runs the original program in it:
//
//	cmd := exec.Command("/bin/sh", "-c", "make test")
//	cmd.Dir = ws
//	box, err := sandbox.Wrap(cmd, &sandbox.Policy{
//		Workspace: ws,
//		Mode:      sandbox.CopyOnWrite,
//		Env:       sandbox.Env(os.Environ(), home),
//	})
//	if err != nil { ... }          // no sandbox here, or a bad policy: nothing runs
//	defer box.Close()
//	err = cmd.Start()
//	box.Started()
//	...
//	cmd.Wait()                     // or <-box.Ended()
//	report := box.Report()         // set-up error, exit status, limits hit
//	changes, err := box.Changes(ledger)
//	changes.Apply(func(c *sandbox.Change) bool { return !c.Risky }, ledger)
//
// In CopyOnWrite mode the run writes to an overlay's upper layer; Changes
// reads what it changed from that layer alone, and ChangeSet.Apply applies
// changes atomically, file by file, never overwriting a file changed in the
// workspace meanwhile. A Ledger remembers the files a session created, which
// later runs may change without asking.
//
// Probe tells what the machine allows (and is what `lcp doctor` prints);
// ForceOff and LCP_SANDBOX=off switch the sandbox off. On other systems Wrap
// returns ErrUnsupported. docs/sandbox.md in the repository describes the
// sandbox for users; docs/decisions.md says why it is built this way.
package sandbox
