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
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--pprof %q: must be a loopback address (127.0.0.1:PORT, [::1]:PORT or localhost:PORT)", addr)
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
