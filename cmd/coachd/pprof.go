package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"strings"
	"time"
)

// servePprof serves net/http/pprof on addr, which must be a loopback
// address: profiles reveal code paths and memory (and cmdline the flags,
// secrets included), and the endpoints have no authentication. It returns
// a func that stops the listener.
func servePprof(addr string, logger *slog.Logger) (stop func(), err error) {
	if err := checkListenAddr("--pprof", addr, true); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: loopbackHost(mux), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	logger.Info("pprof listening", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}

// serveMetrics serves h, the Prometheus handler, as /metrics on addr
// without a key, and returns a func that stops the listener. On a
// loopback address it answers loopback Hosts only (loopbackHost): not a
// web page that rebinds its name there. A private network's address is
// the operator's to guard.
func serveMetrics(addr string, h http.Handler, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	var handler http.Handler = mux
	if ap, err := netip.ParseAddrPort(ln.Addr().String()); err == nil && ap.Addr().IsLoopback() {
		handler = loopbackHost(mux)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	logger.Info("metrics listening", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}

// loopbackHost serves only requests whose Host is a loopback one (the
// keyless listeners on loopback: --pprof, --metrics-addr): a web
// page the operator opens can point its own name at 127.0.0.1 (DNS
// rebinding) and read what a loopback listener answers as same-origin.
func loopbackHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hp, _, err := net.SplitHostPort(host); err == nil {
			host = hp
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "this listener answers only requests to a loopback host (127.0.0.1, [::1], localhost)", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// checkAddrs checks serve's listen addresses (--addr, and --metrics-addr
// and --pprof when set) before anything is opened.
func (cfg *serveConfig) checkAddrs() error {
	if err := checkListenAddr("--addr", cfg.Addr, false); err != nil {
		return err
	}
	if cfg.MetricsAddr != "" {
		if err := checkListenAddr("--metrics-addr", cfg.MetricsAddr, false); err != nil {
			return err
		}
	}
	if cfg.Pprof != "" {
		return checkListenAddr("--pprof", cfg.Pprof, true)
	}
	return nil
}

// checkListenAddr says what is wrong with a listen address given as flag
// name, before serve opens its database: no HOST:PORT at all, or a port
// that is neither a number from 0 to 65535 (0 picks a free one) nor a
// service name; with loopback, a host that is not a loopback one.
func checkListenAddr(name, addr string, loopback bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: want HOST:PORT, e.g. 127.0.0.1:8080 (%v)", name, addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%s %q: the port must be a number from 0 to 65535 (or a service name)", name, addr)
	}
	if loopback {
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("%s %q: must be a loopback address (127.0.0.1:PORT, [::1]:PORT or localhost:PORT)", name, addr)
		}
	}
	return nil
}
