package oauth

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// discovery is what lcp learned about where and how to get a token.
type discovery struct {
	// resource is the resource indicator (RFC 8707) to ask tokens for.
	resource string
	// prmURL is where the protected resource metadata was found; empty
	// when the server has none (the 2025-03-26 revision).
	prmURL          string
	scopesSupported []string
	// meta is the authorization server's metadata; with fallback set, the
	// default endpoints under its URL, since it publishes none.
	meta     *oauthex.AuthServerMeta
	fallback bool
	// looked lists where metadata was looked for in vain, for the error
	// of a server that publishes none.
	looked []string
}

// prmCandidate is a place protected resource metadata may be, and the
// resource RFC 9728 expects the document found there to name.
type prmCandidate struct{ url, resource string }

// prmCandidates lists where to look for the protected resource metadata
// of server, in the order of the MCP specification: the URL of the
// challenge, the well-known URL with the server's path, the well-known URL
// at the root (RFC 9728, section 3).
func prmCandidates(fromChallenge, server string) []prmCandidate {
	var out []prmCandidate
	add := func(c prmCandidate) {
		for _, o := range out {
			if o.url == c.url {
				return
			}
		}
		out = append(out, c)
	}
	if fromChallenge != "" {
		add(prmCandidate{fromChallenge, server})
	}
	u, err := url.Parse(server)
	if err != nil {
		return out
	}
	origin := &url.URL{Scheme: u.Scheme, Host: u.Host}
	if p := strings.Trim(u.EscapedPath(), "/"); p != "" {
		add(prmCandidate{origin.String() + "/.well-known/oauth-protected-resource/" + p, server})
	}
	add(prmCandidate{origin.String() + "/.well-known/oauth-protected-resource", origin.String()})
	return out
}

// coversResource reports whether the resource a metadata document names
// may be used for server: the same origin, and the same path or one of its
// parents. RFC 9728 asks for the identifier the document was looked up
// with; a parent on the same origin is accepted too, since the server
// controls the whole origin anyway, while another origin never is: that
// would hand the server's tokens to someone else.
func coversResource(named, server string) bool {
	n, err1 := url.Parse(named)
	s, err2 := url.Parse(server)
	if err1 != nil || err2 != nil || n.Host == "" || n.Fragment != "" {
		return false
	}
	if !strings.EqualFold(n.Scheme, s.Scheme) || canonicalHost(n) != canonicalHost(s) {
		return false
	}
	np, sp := strings.TrimSuffix(n.EscapedPath(), "/"), strings.TrimSuffix(s.EscapedPath(), "/")
	return np == sp || strings.HasPrefix(sp, np+"/")
}

// canonicalHost is the host of u, lowercased, without the default port.
func canonicalHost(u *url.URL) string {
	h, p := strings.ToLower(u.Hostname()), u.Port()
	if p == "" || (p == "443" && strings.EqualFold(u.Scheme, "https")) || (p == "80" && strings.EqualFold(u.Scheme, "http")) {
		return h
	}
	return h + ":" + p
}

// discover finds the protected resource metadata and the authorization
// server's metadata of h's server. A document that is there but unusable
// (not JSON, naming another resource, an issuer that does not match, no
// PKCE) ends the discovery with an error: falling back to guesses would
// send the person, or the client's secret, somewhere the server did not
// mean.
func (h *Handler) discover(ctx context.Context, fromChallenge string) (*discovery, error) {
	d := &discovery{resource: h.server}
	var asURL string
	var looked []string
	for _, c := range prmCandidates(fromChallenge, h.server) {
		if err := checkEndpoint("the protected resource metadata URL", c.url); err != nil {
			return nil, err
		}
		var prm oauthex.ProtectedResourceMetadata
		err := getJSON(ctx, h.opts.HTTPClient, c.url, &prm)
		if notFound(err) {
			looked = append(looked, c.url)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the protected resource metadata at %s: %w", c.url, err)
		}
		if prm.Resource == "" {
			return nil, fmt.Errorf("the protected resource metadata at %s names no resource", c.url)
		}
		if !coversResource(prm.Resource, h.server) {
			return nil, fmt.Errorf("the protected resource metadata at %s is for %q, not for this server (%s): refusing to sign in for it", c.url, clean(prm.Resource), h.server)
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("the protected resource metadata at %s names no authorization server", c.url)
		}
		asURL = prm.AuthorizationServers[0]
		if err := checkEndpoint("the authorization server", asURL); err != nil {
			return nil, fmt.Errorf("the protected resource metadata at %s: %w", c.url, err)
		}
		d.resource, d.prmURL, d.scopesSupported = stripFragment(prm.Resource), c.url, prm.ScopesSupported
		h.opts.Logger.Debug("oauth: protected resource metadata", "server", h.name, "url", c.url, "authorization_server", asURL)
		break
	}
	if d.prmURL == "" {
		// The 2025-03-26 revision: the server's origin is its own
		// authorization server.
		u, _ := url.Parse(h.server)
		asURL = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
		h.opts.Logger.Debug("oauth: no protected resource metadata; the server is its own authorization server", "server", h.name, "looked", looked)
	}
	meta, err := h.authServerMeta(ctx, asURL)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		// No metadata anywhere: the default endpoints of the 2025-03-26
		// revision, under the authorization server's URL.
		base := strings.TrimSuffix(asURL, "/")
		meta = &oauthex.AuthServerMeta{
			Issuer:                base,
			AuthorizationEndpoint: base + "/authorize",
			TokenEndpoint:         base + "/token",
			RegistrationEndpoint:  base + "/register",
		}
		d.fallback = true
		looked = append(looked, asMetaCandidates(asURL)...)
		h.opts.Logger.Debug("oauth: no authorization server metadata; using the default endpoints", "server", h.name, "authorization_server", base)
	} else if !slices.Contains(meta.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("the authorization server %s does not support PKCE with S256 (it offers %q), which lcp requires", asURL, meta.CodeChallengeMethodsSupported)
	}
	for _, e := range []struct{ what, u string }{
		{"authorization_endpoint", meta.AuthorizationEndpoint},
		{"token_endpoint", meta.TokenEndpoint},
		{"registration_endpoint", meta.RegistrationEndpoint},
	} {
		if e.u == "" {
			continue
		}
		if err := checkEndpoint("the "+e.what, e.u); err != nil {
			return nil, fmt.Errorf("the metadata of the authorization server %s: %w", asURL, err)
		}
	}
	if meta.TokenEndpoint == "" {
		return nil, fmt.Errorf("the metadata of the authorization server %s has no token_endpoint", asURL)
	}
	d.meta, d.looked = meta, looked
	return d, nil
}

// asMetaCandidates lists where the metadata of the authorization server
// at asURL may be, in the order of the MCP specification: RFC 8414, then
// OpenID Connect discovery, with the well-known part inserted before the
// path, then (OpenID Connect) appended to it.
func asMetaCandidates(asURL string) []string {
	u, err := url.Parse(asURL)
	if err != nil {
		return nil
	}
	origin := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	p := strings.Trim(u.EscapedPath(), "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server/" + p,
		origin + "/.well-known/openid-configuration/" + p,
		origin + "/" + p + "/.well-known/openid-configuration",
	}
}

// authServerMeta reads the metadata of the authorization server at asURL,
// or returns nil when it publishes none. The document must be for that
// server: its issuer must be asURL, or (as some servers publish it, and
// the conformance suite expects clients to take) asURL's origin or a
// parent path on that origin. An issuer on another origin is refused: the
// document would be claiming to speak for someone else (RFC 8414,
// section 6.2).
func (h *Handler) authServerMeta(ctx context.Context, asURL string) (*oauthex.AuthServerMeta, error) {
	for _, u := range asMetaCandidates(asURL) {
		var meta oauthex.AuthServerMeta
		err := getJSON(ctx, h.opts.HTTPClient, u, &meta)
		if notFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the authorization server metadata at %s: %w", u, err)
		}
		if meta.Issuer == "" || !coversResource(meta.Issuer, asURL) {
			return nil, fmt.Errorf("the authorization server metadata at %s names the issuer %q, not %s: refusing to sign in with it", u, clean(meta.Issuer), asURL)
		}
		if err := checkSchemes(&meta); err != nil {
			return nil, fmt.Errorf("the authorization server metadata at %s: %w", u, err)
		}
		h.opts.Logger.Debug("oauth: authorization server metadata", "server", h.name, "url", u, "issuer", meta.Issuer)
		return &meta, nil
	}
	return nil, nil
}

// checkSchemes refuses URLs a browser would run as script.
func checkSchemes(m *oauthex.AuthServerMeta) error {
	for _, v := range []string{m.AuthorizationEndpoint, m.TokenEndpoint, m.RegistrationEndpoint, m.JWKSURI, m.ServiceDocumentation, m.OpPolicyURI, m.OpTOSURI, m.RevocationEndpoint, m.IntrospectionEndpoint} {
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil {
			return fmt.Errorf("%q is not a URL", v)
		}
		switch strings.ToLower(u.Scheme) {
		case "javascript", "data", "vbscript":
			return fmt.Errorf("%q has a forbidden scheme", v)
		}
	}
	return nil
}

func stripFragment(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		return s[:i]
	}
	return s
}
