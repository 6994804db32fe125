package local

import "syscall"

// killWithParent has the kernel kill a child process when the thread that started
// it ends (PR_SET_PDEATHSIG), so no moto_server outlives a test process that was
// killed.
func killWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
