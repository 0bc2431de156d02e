package kubetest

import (
	"os/exec"
	"syscall"
)

// setDeathSignal kills the child if the test binary dies without running its
// cleanups (a -timeout panic, a kill), so no etcd or kube-apiserver outlives it.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
