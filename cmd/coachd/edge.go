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
	// HeaderTimeout bounds how long a request's headers may take: a
	// client sending them a byte at a time is dropped.
	HeaderTimeout time.Duration
	// MaxStreamsPerUser caps one user's open session streams.
	MaxStreamsPerUser int
}

// defaultHeaderTimeout is --header-timeout's default.
const defaultHeaderTimeout = 10 * time.Second

func (c *edgeConfig) register(fs *flag.FlagSet, env *envDefaults) {
	fs.IntVar(&c.MaxConns, "max-conns", int(env.Int("COACHD_MAX_CONNS", defaultMaxConns)),
		"most connections open at once; more wait to be accepted; 0 is no limit (env COACHD_MAX_CONNS)")
	fs.DurationVar(&c.BodyTimeout, "body-timeout", env.Duration("COACHD_BODY_TIMEOUT", server.DefaultBodyTimeout),
		"how long a request body may take to arrive (env COACHD_BODY_TIMEOUT)")
	fs.DurationVar(&c.WriteTimeout, "write-timeout", env.Duration("COACHD_WRITE_TIMEOUT", sse.DefaultWriteTimeout),
		"how long each write to a client (an SSE event, a response) may take before the client is taken for gone (env COACHD_WRITE_TIMEOUT)")
	fs.DurationVar(&c.HeaderTimeout, "header-timeout", env.Duration("COACHD_HEADER_TIMEOUT", defaultHeaderTimeout),
		"how long a request's headers may take to arrive before the connection is dropped (env COACHD_HEADER_TIMEOUT)")
	fs.IntVar(&c.MaxStreamsPerUser, "max-streams-per-user", int(env.Int("COACHD_MAX_STREAMS_PER_USER", 0)),
		"most session streams one user holds open; more are refused with 429; 0 is no limit (env COACHD_MAX_STREAMS_PER_USER)")
}

func (c *edgeConfig) check() error {
	switch {
	case c.MaxConns < 0:
		return fmt.Errorf("--max-conns must be 0 (no limit) or more")
	case c.BodyTimeout <= 0, c.WriteTimeout <= 0, c.HeaderTimeout <= 0:
		return fmt.Errorf("--body-timeout, --write-timeout and --header-timeout must be positive")
	case c.MaxStreamsPerUser < 0:
		return fmt.Errorf("--max-streams-per-user must be 0 (no limit) or more")
	}
	return nil
}

func (c edgeConfig) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("max_conns", c.MaxConns),
		slog.Duration("body_timeout", c.BodyTimeout), slog.Duration("write_timeout", c.WriteTimeout),
		slog.Duration("header_timeout", c.HeaderTimeout), slog.Int("max_streams_per_user", c.MaxStreamsPerUser))
}
