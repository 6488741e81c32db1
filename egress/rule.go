package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is one entry of an allow-list: a host name, a "*.domain"
// wildcard or an IP address, with a port or any port.
type Rule struct {
	// Host is the lower-case name without its trailing dot, the domain of
	// a wildcard (without "*."), or an IP address in its canonical form.
	Host string
	// Wildcard: the rule allows every name below Host (not Host itself).
	Wildcard bool
	// IP: Host is an address literal.
	IP bool
	// Port is the one port allowed; 0 means any.
	Port int
}

// RuleError reports an allow-list entry that is not a rule.
type RuleError struct {
	Entry  string
	Reason string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("network entry %q: %s (want host, host:port, *.domain or *.domain:port)", e.Entry, e.Reason)
}

// ParseRule reads one entry: "api.example.org", "api.example.org:443",
// "*.example.org", "*.example.org:443", "127.0.0.1:8080", "[::1]:8080".
// Names are compared without case and without a trailing dot; a URL, a
// path, a bare "*" or a wildcard in the middle of a name is an error.
func ParseRule(s string) (Rule, error) {
	bad := func(why string) (Rule, error) { return Rule{}, &RuleError{Entry: s, Reason: why} }
	in := strings.TrimSpace(s)
	switch {
	case in == "":
		return bad("it is empty")
	case strings.Contains(in, "://"):
		return bad("write the host, not a URL")
	case strings.ContainsAny(in, "/?#@ \t"):
		return bad("a host cannot contain '/', '?', '#', '@' or spaces")
	}
	host, port := in, ""
	if strings.HasPrefix(in, "[") {
		end := strings.IndexByte(in, ']')
		if end < 0 {
			return bad("an unclosed '['")
		}
		host, port = in[1:end], in[end+1:]
		if port != "" {
			if !strings.HasPrefix(port, ":") {
				return bad("text after ']'")
			}
			port = port[1:]
			if port == "" {
				return bad("an empty port")
			}
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return bad("not an IPv6 address between '[' and ']'")
		}
	} else if strings.Count(in, ":") == 1 {
		host, port, _ = strings.Cut(in, ":")
		if port == "" {
			return bad("an empty port")
		}
	} else if strings.Count(in, ":") > 1 {
		if _, err := netip.ParseAddr(in); err != nil {
			return bad("too many ':'")
		}
		// A bare IPv6 address: any port.
	}
	r := Rule{}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return bad("the port must be a number from 1 to 65535")
		}
		r.Port = n
	}
	if !strings.HasPrefix(in, "[") {
		host = strings.TrimSuffix(host, ".")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return bad("an address with a zone")
		}
		r.Host, r.IP = a.Unmap().String(), true
		return r, nil
	}
	host = strings.ToLower(host)
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Wildcard = true
		host = rest
	}
	if host == "*" || host == "" {
		return bad("a rule must name a host or a domain (a bare '*' would allow everything: use \"network\": true for the host's network)")
	}
	if err := checkName(host); err != nil {
		return bad(err.Error())
	}
	r.Host = host
	return r, nil
}

// checkName checks a host name: labels of letters, digits, '-' and '_',
// 1 to 63 bytes each, at most 253 in all.
func checkName(h string) error {
	if len(h) > 253 {
		return errors.New("the name is longer than 253 bytes")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			return errors.New("an empty label")
		}
		if len(label) > 63 {
			return errors.New("a label is longer than 63 bytes")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("a label starts or ends with '-'")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				if c == '*' {
					return errors.New("'*' is allowed only as the first label (*.domain)")
				}
				return fmt.Errorf("%q is not allowed in a host name", c)
			}
		}
	}
	return nil
}

// ParseRules reads an allow-list; the error names every bad entry.
func ParseRules(entries []string) ([]Rule, error) {
	var out []Rule
	var errs []error
	for _, e := range entries {
		r, err := ParseRule(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// String returns the rule as it is written.
func (r Rule) String() string {
	h := r.Host
	if r.Wildcard {
		h = "*." + h
	}
	if r.Port == 0 {
		return h
	}
	if r.IP && strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h + ":" + strconv.Itoa(r.Port)
}

// Match reports whether the rule allows host:port; host is normalised
// as ParseRule does.
func (r Rule) Match(host string, port int) bool {
	if r.Port != 0 && r.Port != port {
		return false
	}
	host = normalHost(host)
	switch {
	case r.IP:
		return host == r.Host
	case r.Wildcard:
		return strings.HasSuffix(host, "."+r.Host)
	}
	return host == r.Host
}

// normalHost is host as rules compare it: an address in its canonical
// form, a name in lower case without its trailing dot.
func normalHost(host string) string {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// List is an allow-list.
type List []Rule

// Allows returns the first rule that allows host:port.
func (l List) Allows(host string, port int) (Rule, bool) {
	for _, r := range l {
		if r.Match(host, port) {
			return r, true
		}
	}
	return Rule{}, false
}

// Strings returns the rules as written.
func (l List) Strings() []string {
	out := make([]string, len(l))
	for i, r := range l {
		out[i] = r.String()
	}
	return out
}
