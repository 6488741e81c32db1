package oauth

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Grant types a Config may ask for.
const (
	// GrantAuthorizationCode signs a person in through their browser (the
	// default).
	GrantAuthorizationCode = "authorization_code"
	// GrantClientCredentials gets tokens for a machine with the client's
	// own id and secret, without a person.
	GrantClientCredentials = "client_credentials"
)

// Config is the "oauth" object of an HTTP server entry of an MCP
// configuration. Everything is optional: with no Config at all, lcp
// discovers what it needs and registers itself with the authorization
// server.
//
//	{"url": "https://mcp.example.com/mcp",
//	 "oauth": {"client_id": "lcp-at-acme", "client_secret": "${ACME_SECRET}", "scopes": ["tools:read"]}}
type Config struct {
	// ClientID is a client registered with the authorization server in
	// advance. An https URL is a client ID metadata document: it is used
	// as the client id when the authorization server supports them, and
	// lcp registers dynamically otherwise.
	ClientID string `json:"client_id,omitempty"`
	// ClientSecret goes with a pre-registered ClientID (write it as
	// "${VAR}" to keep it out of the file).
	ClientSecret string `json:"client_secret,omitempty"`
	// PrivateKey authenticates a client credentials client with a signed
	// JWT (private_key_jwt, RFC 7523) instead of a secret: a PEM private
	// key, EC or RSA (write it as "${VAR}"), or the file PrivateKeyFile.
	PrivateKey     string `json:"private_key,omitempty"`
	PrivateKeyFile string `json:"private_key_file,omitempty"`
	// SigningAlgorithm is the JWS algorithm of the assertion; by default
	// the key's usual one (ES256 for a P-256 key, RS256 for RSA).
	SigningAlgorithm string `json:"signing_algorithm,omitempty"`
	// Scopes replace the scopes lcp would pick from the server's
	// challenge and metadata; a step-up challenge still adds its own.
	Scopes []string `json:"scopes,omitempty"`
	// Grant is GrantAuthorizationCode (the default) or
	// GrantClientCredentials, which needs ClientID and ClientSecret.
	Grant string `json:"grant,omitempty"`
	// RedirectPort fixes the port of the loopback redirect
	// (http://127.0.0.1:<port>/callback), for a client registered with
	// that exact redirect URI; by default lcp takes a free port.
	RedirectPort int `json:"redirect_port,omitempty"`
}

// Validate reports whether c can be used.
func (c *Config) Validate() error {
	if c == nil {
		return nil
	}
	switch c.Grant {
	case "", GrantAuthorizationCode:
	case GrantClientCredentials:
		keyed := c.PrivateKey != "" || c.PrivateKeyFile != ""
		if c.ClientID == "" || c.ClientSecret == "" && !keyed {
			return errors.New(`the client_credentials grant needs "client_id" and "client_secret" (or "private_key")`)
		}
		if c.ClientSecret != "" && keyed {
			return errors.New(`give "client_secret" or "private_key", not both`)
		}
		if isURL(c.ClientID) {
			return errors.New(`the client_credentials grant needs a registered "client_id", not a URL`)
		}
	default:
		return fmt.Errorf("unknown grant %q (want %s or %s)", c.Grant, GrantAuthorizationCode, GrantClientCredentials)
	}
	if (c.PrivateKey != "" || c.PrivateKeyFile != "") && c.Grant != GrantClientCredentials {
		return errors.New(`"private_key" goes with the client_credentials grant`)
	}
	if c.PrivateKey != "" && c.PrivateKeyFile != "" {
		return errors.New(`give "private_key" or "private_key_file", not both`)
	}
	if c.PrivateKey != "" {
		if _, err := parseSigningKey(c.PrivateKey, c.SigningAlgorithm); err != nil {
			return err
		}
	}
	if c.RedirectPort < 0 || c.RedirectPort > 65535 {
		return fmt.Errorf("redirect_port %d is not a port", c.RedirectPort)
	}
	if strings.HasPrefix(strings.ToLower(c.ClientID), "http:") {
		return fmt.Errorf("client_id %q: a client ID metadata document must be served over https", c.ClientID)
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		return errors.New(`"client_secret" needs a "client_id"`)
	}
	for _, s := range c.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return fmt.Errorf("scope %q is not a scope token", s)
		}
	}
	return nil
}

// isURL reports whether a client id is a client ID metadata document URL.
func isURL(id string) bool {
	u, err := url.Parse(id)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.Path != "" && u.Path != "/"
}

// DefaultSignInTimeout is how long a browser sign-in waits for the person.
const DefaultSignInTimeout = 5 * time.Minute

// Options configure sign-in for every server of a client. The zero value
// is usable: tokens in the default file store, the system browser, the
// sign-in link printed on standard error.
type Options struct {
	// Store keeps tokens and registered clients between runs; nil means a
	// FileStore at DefaultStorePath.
	Store Store
	// OpenURL opens the authorization page for the person; nil means the
	// system browser ($BROWSER, xdg-open, open). Its failure is not fatal:
	// the link is printed either way.
	OpenURL func(url string) error
	// Out receives the sign-in instructions (the link to open); nil means
	// os.Stderr. Nothing secret is ever written to it.
	Out io.Writer
	// SignInTimeout bounds the wait for the person to sign in;
	// DefaultSignInTimeout when zero.
	SignInTimeout time.Duration
	// NoSignIn makes a server that needs a person to sign in fail with
	// ErrSignInRequired instead of starting the browser flow. Stored
	// tokens, refresh and the client credentials grant still work.
	NoSignIn bool
	// ClientName is the name lcp registers under; "lcp" by default.
	ClientName string
	// HTTPClient makes the discovery, registration and token requests;
	// nil means one on http.DefaultTransport that refuses private and
	// link-local addresses (as the SDK's discovery does).
	HTTPClient *http.Client
	// Logger receives a line per step (never a token); nil discards.
	Logger *slog.Logger
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Store == nil {
		c.Store = &FileStore{}
	}
	if c.OpenURL == nil {
		c.OpenURL = openBrowser
	}
	if c.Out == nil {
		c.Out = os.Stderr
	}
	if c.SignInTimeout <= 0 {
		c.SignInTimeout = DefaultSignInTimeout
	}
	if c.ClientName == "" {
		c.ClientName = "lcp"
	}
	c.HTTPClient = safeClient(c.HTTPClient)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// SignInTimeoutOrDefault returns the time limit of a sign-in with o.
func (o *Options) SignInTimeoutOrDefault() time.Duration {
	if o == nil || o.SignInTimeout <= 0 {
		return DefaultSignInTimeout
	}
	return o.SignInTimeout
}
