//go:build !windows

package update

import (
	"errors"
	"os/exec"
	"syscall"
)

// detach starts the restarted app in a session of its own, so it outlives
// this process and its terminal's job control.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
