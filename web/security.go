package web

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrRemoteAddr is wrapped by the error CheckAddr returns for an address
// other machines can reach when remote access was not allowed.
var ErrRemoteAddr = errors.New("not a loopback address")

// CheckAddr checks a listen address (host:port) for lcp serve: it must
// name a loopback interface (127.0.0.0/8, ::1, localhost) unless
// allowRemote is set. An empty host ("":7777) listens on every interface
// and counts as remote.
func CheckAddr(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if port == "" {
		return fmt.Errorf("listen address %q: missing port", addr)
	}
	if allowRemote || IsLoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("listen address %q: %w (pass --allow-remote to serve other machines)", addr, ErrRemoteAddr)
}

// IsLoopbackHost reports whether host (without port) names the loopback
// interface: localhost or a loopback IP literal.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostAllowed is the defence against DNS rebinding: a page from another
// site whose name was re-pointed at 127.0.0.1 sends its own name as Host.
func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "" {
		return false
	}
	for _, h := range s.opts.Hosts {
		if strings.EqualFold(h, strings.Trim(host, "[]")) {
			return true
		}
	}
	if s.opts.Remote && len(s.opts.Hosts) == 0 {
		// Every request needs the token, the page included: a rebound
		// name gets nothing without it.
		return true
	}
	return IsLoopbackHost(host)
}

// tokenOK compares a presented token in constant time.
func (s *Server) tokenOK(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// guardAPI checks what every /api/ request must show: a same-origin
// browser context and either a signed-in browser's cookie or the
// server's token. It writes the refusal and reports false when the
// request must not go on.
func (s *Server) guardAPI(w http.ResponseWriter, r *http.Request) bool {
	if msg := crossOrigin(r); msg != "" {
		writeError(w, http.StatusForbidden, msg)
		return false
	}
	if s.auth.signedIn(r) {
		return true
	}
	tok := r.Header.Get(TokenHeader)
	if tok == "" {
		w.Header().Set("WWW-Authenticate", `LCP-Token realm="lcp"`)
		writeError(w, http.StatusUnauthorized, "not signed in: open the address lcp serve printed (or send the server's token in "+TokenHeader+")")
		return false
	}
	if !s.tokenOK(tok) {
		writeError(w, http.StatusForbidden, "wrong session token")
		return false
	}
	return true
}

// crossOrigin returns why r comes from another site, or "" when it comes
// from the page itself or from a program that is not a browser (which
// sends neither Origin nor Sec-Fetch-Site, and still needs the token).
func crossOrigin(r *http.Request) string {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return "cross-site request refused (Sec-Fetch-Site: " + truncate(site, 40) + ")"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, r.Host) {
		return "cross-origin request refused (Origin: " + truncate(origin, 100) + ")"
	}
	return ""
}

// contentSecurityPolicy allows the page's own script and style files and
// nothing else: no inline script, no other origin, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func setCommonHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}
