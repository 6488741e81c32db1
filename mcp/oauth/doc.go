// Package oauth signs lcp's MCP client in to remote MCP servers that are
// protected by OAuth 2.1, as the MCP authorization specification asks.
//
// A Handler serves one server URL. It is the SDK's auth.OAuthHandler: the
// streamable HTTP transport asks it for the bearer token of every request
// and calls Authorize when the server answers 401 Unauthorized, or 403
// Forbidden with error="insufficient_scope". Authorize then:
//
//  1. finds the server's protected resource metadata (RFC 9728): at the
//     resource_metadata URL of the WWW-Authenticate challenge, then at
//     /.well-known/oauth-protected-resource/<path>, then at the root; a
//     server without any is taken to be its own authorization server, as
//     the 2025-03-26 revision of the specification says;
//  2. checks that the metadata names this server as its resource, and
//     refuses to go on otherwise (a server must not collect tokens meant
//     for another);
//  3. reads the authorization server's metadata (RFC 8414 and OpenID
//     Connect discovery, with the SDK), checks its issuer and that it does
//     PKCE with S256, and falls back to /authorize, /token and /register
//     under the authorization server's URL when it publishes none;
//  4. picks the scopes: the challenge's scope, else the scopes_supported
//     of the resource metadata, else none; on insufficient_scope, the
//     union of the granted scopes and the new ones (step-up), once per
//     set of scopes;
//  5. gets a token: with the client credentials grant for machines, or
//     with the authorization code grant and PKCE, through the person's
//     browser and a redirect to a one-time listener on 127.0.0.1. The
//     client is a URL client id (client ID metadata document) when the
//     authorization server supports them, else the configured client id
//     (pre-registered), else one registered on the fly (RFC 7591) and
//     remembered. Every authorization and token request carries the
//     resource indicator (RFC 8707).
//
// Tokens (and dynamically registered clients) are kept in a Store keyed
// by server URL, by default a 0600 JSON file in the user's configuration
// directory (see DefaultStorePath), never in the inventory's
// configuration. Expired tokens are refreshed with their refresh token.
// No token, refresh token or client secret is ever written to a log, an
// error or the terminal.
//
//	h, err := oauth.New("https://mcp.example.com/mcp", "example", &oauth.Config{}, &oauth.Options{})
//	if err != nil {
//		return err
//	}
//	transport := &mcp.StreamableClientTransport{Endpoint: "https://mcp.example.com/mcp", OAuthHandler: h}
package oauth
