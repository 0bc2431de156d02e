//go:build !linux

package kubetest

import "os/exec"

// setDeathSignal has no portable equivalent outside Linux: there the cleanups
// alone stop the children.
func setDeathSignal(*exec.Cmd) {}
