package guard

import (
	"fmt"
	"net"
	"strings"
)

// Listen opens the TCP listener. A non-loopback address is refused unless
// insecure is set: the API holds the power to allow or block the user's
// agents, and a token is all that protects it on a network.
func Listen(addr string, insecure bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: want host:port", addr)
	}
	if !isLoopbackHost(host) && !insecure {
		return nil, fmt.Errorf("listen address %q is not loopback: tollgate listens on 127.0.0.1 only; add --insecure-listen to expose it on %s (anyone with the token can then allow or block your agents)", addr, host)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// InsecureHostFor returns the host the Host check must admit besides the
// loopback names, for a --insecure-listen address: "" when loopback, "*" for
// a wildcard address (then any IP literal is admitted: DNS rebinding needs a
// name, so IP literals are safe to admit), else the address's host.
func InsecureHostFor(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	switch {
	case err != nil || isLoopbackHost(host):
		return ""
	case host == "" || host == "0.0.0.0" || host == "::":
		return "*"
	}
	return host
}
