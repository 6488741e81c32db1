// Package spawn starts child processes that die with lcp.
//
// On Linux a child can ask for a signal when its parent dies (the
// parent-death signal), but the kernel sends it when the *thread* that
// forked the child exits, not the process. Go may retire OS threads (a
// goroutine that exits while locked to its thread takes the thread with
// it), so children that rely on the signal are started from one goroutine
// locked to its thread for the life of the process. Elsewhere Start is
// cmd.Start and Deathsig does nothing.
//
//	cmd := exec.Command("bash", "-c", script)
//	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
//	spawn.Deathsig(cmd.SysProcAttr, syscall.SIGKILL)
//	if err := spawn.Start(cmd); err != nil { ... }
package spawn
