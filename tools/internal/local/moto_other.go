//go:build !linux

package local

import "syscall"

// killWithParent is nil outside Linux, which has no parent-death signal: a
// moto_server whose parent was killed keeps running until it is stopped by hand.
func killWithParent() *syscall.SysProcAttr { return nil }
