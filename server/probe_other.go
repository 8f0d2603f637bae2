//go:build !unix

package server

import "net"

// connGone cannot look at the socket here: a parked stream's client is
// found gone by its next failed write (a heartbeat at the latest).
func connGone(net.Conn) bool { return false }
