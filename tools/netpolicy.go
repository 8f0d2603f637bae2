package tools

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// AddrPolicy says which addresses webhook tools may connect to. Public
// addresses are allowed; loopback, private, link-local, shared (CGNAT),
// unspecified, multicast and reserved ones are refused unless listed. It is
// enforced by the dialer, after DNS resolution, on the address actually
// connected to: a hostname that resolves to 127.0.0.1 is refused like
// 127.0.0.1 itself, and DNS rebinding gains nothing.
//
// An operator's policy (--webhook-allow) lists what may be reached beyond
// the public internet; a tool's own allow list narrows it: with one, the
// tool reaches only what both allow.
type AddrPolicy struct {
	hosts    []string // lowercase host names, matched exactly
	prefixes []netip.Prefix
	narrow   *AddrPolicy // a tool's own list: everything must match it too
	flag     string      // how to widen the policy, for error messages
}

// ParseAddrPolicy reads a comma-separated list of hosts and CIDRs
// ("127.0.0.1/32,10.0.0.0/8,hooks.internal"); a bare IP is one address.
func ParseAddrPolicy(list string) (*AddrPolicy, error) {
	var items []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			items = append(items, s)
		}
	}
	return newAddrPolicy(items)
}

func newAddrPolicy(items []string) (*AddrPolicy, error) {
	p := &AddrPolicy{flag: "--webhook-allow"}
	for _, s := range items {
		if pfx, err := netip.ParsePrefix(s); err == nil {
			p.prefixes = append(p.prefixes, pfx.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(s); err == nil {
			ip = ip.Unmap()
			p.prefixes = append(p.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		if !validHost(s) {
			return nil, fmt.Errorf("%q is not a host name, an IP address or a CIDR", s)
		}
		p.hosts = append(p.hosts, strings.ToLower(s))
	}
	return p, nil
}

func validHost(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Narrow returns the policy with a tool's own allow list applied.
func (p *AddrPolicy) Narrow(items []string) (*AddrPolicy, error) {
	if len(items) == 0 {
		return p, nil
	}
	n, err := newAddrPolicy(items)
	if err != nil {
		return nil, err
	}
	out := *p
	out.narrow = n
	return &out, nil
}

func (p *AddrPolicy) lists(host string, ip netip.Addr) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, h := range p.hosts {
		if h == host {
			return true
		}
	}
	for _, pfx := range p.prefixes {
		if pfx.Contains(ip) {
			return true
		}
	}
	return false
}

// AddrError is a connection the policy refused. Its text names the
// address and the reason, never the URL (which may hold a secret).
type AddrError struct {
	Addr   netip.Addr
	Reason string
}

func (e *AddrError) Error() string { return e.Addr.String() + " " + e.Reason }

// Check decides whether host (as written in the URL) may be reached at ip.
func (p *AddrPolicy) Check(host string, ip netip.Addr) error {
	ip = ip.Unmap()
	if kind := restricted(ip); kind != "" && !p.lists(host, ip) {
		return &AddrError{ip, fmt.Sprintf("is %s address; webhooks reach it only when allowed with %s (env COACHD_WEBHOOK_ALLOW)", kind, p.flag)}
	}
	if p.narrow != nil && !p.narrow.lists(host, ip) {
		return &AddrError{ip, "is not in the tool's allow list"}
	}
	return nil
}

var (
	sharedNet   = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT, cloud internals
	thisNet     = netip.MustParsePrefix("0.0.0.0/8")
	reservedNet = netip.MustParsePrefix("240.0.0.0/4") // includes the broadcast address
	nat64Net    = netip.MustParsePrefix("64:ff9b::/96")
	// Special-purpose ranges that are no one's public address: IETF
	// protocol assignments (Oracle Cloud's metadata service is
	// 192.0.0.192), benchmarking networks, local-use NAT64 (it embeds any
	// IPv4 address, 169.254.169.254 too) and IPv6 site-local.
	special = []netip.Prefix{
		netip.MustParsePrefix("192.0.0.0/24"),
		netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("64:ff9b:1::/48"),
		netip.MustParsePrefix("fec0::/10"),
	}
)

func isSpecial(ip netip.Addr) bool {
	for _, p := range special {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// restricted names the kind of a non-public address ("a loopback"), or is
// "" for a public one.
func restricted(ip netip.Addr) string {
	switch {
	case !ip.IsValid():
		return "an invalid"
	case ip.IsLoopback():
		return "a loopback"
	case ip.IsUnspecified() || thisNet.Contains(ip):
		return "an unspecified"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "a link-local"
	case ip.IsPrivate():
		return "a private"
	case sharedNet.Contains(ip):
		return "a shared (CGNAT)"
	case ip.IsMulticast() || ip.IsInterfaceLocalMulticast():
		return "a multicast"
	case reservedNet.Contains(ip) || nat64Net.Contains(ip) || isSpecial(ip):
		return "a reserved"
	}
	return ""
}

// checkURLHost judges a URL host at load time when it is a literal IP
// (host names are judged when they are resolved, at call time).
func (p *AddrPolicy) checkURLHost(host string) error {
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return nil
	}
	return p.Check(host, ip)
}

// client is an HTTP client for webhooks under the policy: no redirects
// followed (a 3xx is the answer), no proxy (it would connect for us,
// out of the policy's sight), and every dial checked after resolution.
func (p *AddrPolicy) client() *http.Client {
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
				ap, err := netip.ParseAddrPort(address)
				if err != nil {
					return &AddrError{Reason: "is not an IP address"}
				}
				return p.Check(host, ap.Addr())
			}}
			return d.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          20,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Client is an HTTP client under the policy, for what else a pack makes
// coachd call (an MCP server's streamable HTTP endpoint).
func (p *AddrPolicy) Client() *http.Client { return p.client() }

// CheckURLHost judges a URL's host at load time when it is a literal IP.
func (p *AddrPolicy) CheckURLHost(host string) error { return p.checkURLHost(host) }
