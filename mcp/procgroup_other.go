//go:build !linux

package mcp

import "syscall"

// dieWithParent does nothing where the kernel has no parent-death signal:
// a server there stops when its stdin ends (coachd's end closes it).
func dieWithParent(*syscall.SysProcAttr) {}
