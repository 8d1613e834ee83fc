//go:build unix && !linux

package dbinstance

import "syscall"

// serverAttr runs the server as cred's user in a process group of its own
// (signals meant for the test's terminal do not reach it).
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}
