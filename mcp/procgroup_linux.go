package mcp

import "syscall"

// dieWithParent has the kernel kill the server when coachd dies, however
// it dies: its own process group is out of reach of a signal to coachd's,
// and a coachd killed with SIGKILL closes nothing. (The signal follows
// the OS thread that started the server: Go ends a thread only when a
// goroutine locked to it ends, which the goroutines starting servers
// never are.) What the server started, npx's node, sees its stdin end
// and must exit then, as MCP's stdio transport asks.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
