package main

import (
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sse"
)

// defaultMaxConns caps open connections: far above what one process
// serves well, far below the descriptors a flood of idle connections
// would take.
const defaultMaxConns = 4096

// edgeConfig bounds what one client can hold at the HTTP edge: open
// connections, time to send a body, time to take each written event.
type edgeConfig struct {
	MaxConns     int
	BodyTimeout  time.Duration
	WriteTimeout time.Duration
}

func (c *edgeConfig) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.IntVar(&c.MaxConns, "max-conns", int(envInt(getenv, "COACHD_MAX_CONNS", defaultMaxConns)),
		"most connections open at once; more wait to be accepted; 0 is no limit (env COACHD_MAX_CONNS)")
	fs.DurationVar(&c.BodyTimeout, "body-timeout", envDuration(getenv, "COACHD_BODY_TIMEOUT", server.DefaultBodyTimeout),
		"how long a request body may take to arrive (env COACHD_BODY_TIMEOUT)")
	fs.DurationVar(&c.WriteTimeout, "write-timeout", envDuration(getenv, "COACHD_WRITE_TIMEOUT", sse.DefaultWriteTimeout),
		"how long each write to a client (an SSE event, a response) may take before the client is taken for gone (env COACHD_WRITE_TIMEOUT)")
}

func (c *edgeConfig) check() error {
	switch {
	case c.MaxConns < 0:
		return fmt.Errorf("--max-conns must be 0 (no limit) or more")
	case c.BodyTimeout <= 0, c.WriteTimeout <= 0:
		return fmt.Errorf("--body-timeout and --write-timeout must be positive")
	}
	return nil
}

func (c edgeConfig) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("max_conns", c.MaxConns),
		slog.Duration("body_timeout", c.BodyTimeout), slog.Duration("write_timeout", c.WriteTimeout))
}
