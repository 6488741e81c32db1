package mcp

import (
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/lcptools/lcp/mcp/oauth"
)

// This file joins package oauth to the client: which servers get a
// handler, and what the toolset offers to sign in and out.

// newOAuthHandler returns the OAuth handler of a streamable HTTP server,
// or nil: stdio and legacy SSE servers have none, and neither has a server
// given an Authorization header (its token is the configuration's).
func newOAuthHandler(opts *ClientOptions, sc *ServerConfig) *oauth.Handler {
	if sc.Type != TypeHTTP {
		return nil
	}
	for k := range sc.Headers {
		if strings.EqualFold(k, "Authorization") {
			return nil
		}
	}
	var o oauth.Options
	if opts.OAuth != nil {
		o = *opts.OAuth
	}
	if o.Logger == nil {
		o.Logger = opts.Logger
	}
	if o.HTTPClient == nil && opts.HTTPClient != nil {
		// Without the configured headers: they are the MCP server's, not
		// the authorization server's.
		o.HTTPClient = &http.Client{Transport: opts.HTTPClient.Transport, Timeout: opts.HTTPClient.Timeout}
	}
	h, err := oauth.New(sc.URL, sc.Alias, sc.OAuth, &o)
	if err != nil {
		opts.Logger.Warn("mcp: no OAuth for this server", "server", sc.Alias, "error", err)
		return nil
	}
	return h
}

// oauthHandler is r's handler as the SDK's transport takes it (a nil
// interface, not a nil pointer, when there is none).
func (r *remote) oauthHandler() auth.OAuthHandler {
	if r.auth == nil {
		return nil
	}
	return r.auth
}

// connectTimeout bounds connecting to r: ConnectTimeout, plus the time a
// person has to sign in when the server may ask for it.
func (r *remote) connectTimeout() time.Duration {
	d := r.ts.opts.ConnectTimeout
	if r.auth != nil {
		d += r.ts.opts.OAuth.SignInTimeoutOrDefault()
	}
	return d
}

// OAuth returns the OAuth handler of the server named alias, or nil when
// it has none (it is not a streamable HTTP server, or its configuration
// gives an Authorization header). Hosts use it to show who is signed in
// (Credentials) and to sign out (SignOut).
func (c *ClientToolset) OAuth(alias string) *oauth.Handler {
	r := c.byAlias[alias]
	if r == nil {
		return nil
	}
	return r.auth
}
