package dbinstance

import "syscall"

// serverAttr runs the server as cred's user in a process group of its own
// (signals meant for the test's terminal do not reach it) and kills it when
// the test process dies before its cleanup runs.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred, Pdeathsig: syscall.SIGKILL}
}
