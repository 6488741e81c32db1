package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// maxMetadataBytes caps a metadata document or token response.
const maxMetadataBytes = 1 << 20

// safeClient returns the client for requests whose URLs come from the
// server's metadata: one that refuses private, link-local, CGNAT and
// multicast addresses (loopback stays allowed, for servers on this
// machine), like the SDK's discovery client, unless the caller has taken
// over dialing.
func safeClient(c *http.Client) *http.Client {
	var rt http.RoundTripper = http.DefaultTransport
	if c != nil && c.Transport != nil {
		rt = c.Transport
	}
	out := &http.Client{Transport: rt, Timeout: 30 * time.Second}
	if c != nil {
		out.Jar = c.Jar
		if c.Timeout > 0 {
			out.Timeout = c.Timeout
		}
	}
	custom := c != nil && c.Transport != nil
	t, ok := rt.(*http.Transport)
	if !ok || custom && (t.DialContext != nil || t.DialTLSContext != nil) {
		return out
	}
	if t.Proxy != nil {
		req, _ := http.NewRequest(http.MethodGet, "https://example.com", nil)
		if u, err := t.Proxy(req); err == nil && u != nil {
			return out // the proxy decides where requests go
		}
	}
	t = t.Clone()
	t.DialContext = (&net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("non-IP address %q", host)
			}
			if privateOrReserved(ip) {
				return fmt.Errorf("refusing to connect to the non-public address %s", ip)
			}
			return nil
		},
	}).DialContext
	out.Transport = t
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("too many redirects")
		}
		if via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect from https to %s", req.URL.Scheme)
		}
		return nil
	}
	return out
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func privateOrReserved(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() || cgnat.Contains(ip)
}

// isLoopbackHost reports whether host (with or without port) is this
// machine.
func isLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// checkEndpoint refuses a URL lcp would send credentials or a person to
// unless it is https, or http on this machine.
func checkEndpoint(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q is not an absolute URL", what, raw)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopbackHost(u.Host) {
			return fmt.Errorf("%s %q is not https", what, raw)
		}
	default:
		return fmt.Errorf("%s %q is not an http(s) URL", what, raw)
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && privateOrReserved(ip) {
		return fmt.Errorf("%s %q is a non-public address", what, raw)
	}
	return nil
}

// statusError is a metadata request answered with an HTTP error.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return fmt.Sprintf("answered %d %s", e.code, http.StatusText(e.code))
}

// notFound reports whether err means "there is no document here": a 4xx
// answer, which sends discovery on to the next place.
func notFound(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.code >= 400 && se.code < 500
}

// getJSON fetches a metadata document: 200, a JSON content type, at most
// maxMetadataBytes.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxMetadataBytes))
		return &statusError{resp.StatusCode}
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return fmt.Errorf("the content type is %q, not JSON", resp.Header.Get("Content-Type"))
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataBytes))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not a valid JSON document: %w", err)
	}
	return nil
}
