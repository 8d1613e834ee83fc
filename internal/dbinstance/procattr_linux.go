package dbinstance

import "syscall"

// serverAttr runs the server in a process group of its own (Kill ends the
// server and every child it forked, PostgreSQL's backends, as kill -9 of
// the whole server would), as cred's user, and kills it when the test
// process dies before its cleanup runs.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred, Pdeathsig: syscall.SIGKILL}
}
