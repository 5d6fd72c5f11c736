package secrets

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/scidex/substrate/internal/toolname"
)

// Grant is what the operator lets a secret be used for: the tools (by name)
// that may send it and the hosts (host:port) they may send it to. A tool in
// Tools may send the secret to any host in Hosts, and no tool or host else.
type Grant struct {
	Tools []string `json:"tools"`
	Hosts []string `json:"hosts"`
}

// grant is a checked Grant: sets of tool names and of host keys.
type grant struct {
	tools map[string]bool
	hosts map[string]bool
}

// check turns g into a grant, or an error naming the first malformed entry
// by its position (an entry is not a secret, but one written in the wrong
// place might be, so none is quoted).
func (g Grant) check() (*grant, error) {
	if len(g.Tools) == 0 || len(g.Hosts) == 0 {
		return nil, errors.New(`a grant names at least one tool ("tools") and one host:port ("hosts"); leave both out for a secret granted to nothing`)
	}
	out := &grant{tools: map[string]bool{}, hosts: map[string]bool{}}
	for i, t := range g.Tools {
		if !toolname.Valid(t) {
			return nil, fmt.Errorf("tools[%d] is not a tool name (%s)", i, toolname.Rule)
		}
		out.tools[t] = true
	}
	for i, h := range g.Hosts {
		key, err := parseHostPort(h)
		if err != nil {
			return nil, fmt.Errorf("hosts[%d]: %w", i, err)
		}
		out.hosts[key] = true
	}
	return out, nil
}

// parseHostPort checks a grant's host:port and returns its key.
func parseHostPort(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if !strings.Contains(s, ":") || strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
			return "", errors.New("no port: a grant names host:port (e.g. units.example:443, 127.0.0.1:8765, [::1]:8765)")
		}
		return "", errors.New("not host:port (an IPv6 address goes in brackets: [::1]:8765)")
	}
	switch {
	case host == "":
		return "", errors.New("the host is empty")
	case strings.Contains(host, "%"):
		return "", errors.New("an IPv6 zone is not allowed")
	case strings.ContainsAny(host, "*/ "):
		return "", errors.New("a host is one host, not a pattern or a network")
	case !ascii(host):
		return "", errors.New("the host is not ASCII: write an internationalised name in its xn-- form")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", errors.New("the port is not a number from 1 to 65535")
	}
	return hostKey(host, n), nil
}

// Target is where a request to u goes, as a grant names it: the host and
// port the HTTP client dials (net/http's canonicalAddr), the port defaulting
// to 80 for http and 443 for https, the host compared without case (DNS
// names are case-insensitive) and an IP literal in its canonical form, IPv6
// in brackets. A trailing dot is kept: "units." is not "units" to a
// resolver with a search list. It is "" for a URL no grant can match (a
// scheme other than http(s), no host, a non-ASCII host, a bad port).
func Target(u *url.URL) string {
	if u == nil {
		return ""
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.Atoi(port)
	if host == "" || !ascii(host) || strings.Contains(host, "%") || err != nil || n < 1 || n > 65535 {
		return ""
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	return hostKey(host, n)
}

// hostKey is the key of a host and port: the host lower-cased, an IP
// literal canonical, joined as host:port.
func hostKey(host string, port int) string {
	host = strings.ToLower(host)
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
