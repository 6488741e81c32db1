//go:build !unix

package worker

import (
	"errors"
	"os/exec"
	"syscall"
)

func killGroup(pgid int, sig syscall.Signal) {}

func startCmd(cmd *exec.Cmd) error {
	return errors.New("python workers need a Unix system")
}

func sysProcAttr() *syscall.SysProcAttr { return nil }
