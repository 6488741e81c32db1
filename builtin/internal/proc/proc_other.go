//go:build !unix

package proc

import (
	"os"
	"os/exec"
)

func setGroup(cmd *exec.Cmd) {}

// killGroup kills only the child: platforms without process groups cannot
// reach its descendants.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	return ps.ExitCode(), ""
}
