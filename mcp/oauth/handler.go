package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ErrSignInRequired is the error of a server that needs a person to sign
// in when Options.NoSignIn forbids starting the browser flow.
var ErrSignInRequired = errors.New("a person must sign in first")

// Error is the failure to authorize with a server: discovery, a refusal,
// a sign-in that did not complete. It never holds a token or a secret.
type Error struct {
	// Server is the URL of the MCP server.
	Server string
	Err    error
}

func (e *Error) Error() string { return "OAuth for " + e.Server + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// failureMemory is how long a failed authorization is answered without
// trying again: the SDK retries the same handshake at once (a discover
// request, then initialize), and the person should not get a second
// browser tab for it.
const failureMemory = 30 * time.Second

// Handler signs in to one MCP server and keeps its tokens; see the
// package documentation for the flow. It implements the SDK's
// auth.OAuthHandler, and is safe for concurrent use.
type Handler struct {
	server, name string
	cfg          Config
	opts         Options
	now          func() time.Time

	mu        sync.Mutex // one authorization at a time
	lastErr   error
	lastErrAt time.Time
	asked     []string // every scope asked for since the last sign-in from scratch
	refreshed string   // the access token a refresh after a 401 gave

	key *signingKey // private_key_jwt, when configured

	tmu    sync.Mutex // guards creds and loaded
	creds  *Credentials
	loaded bool
}

var _ auth.OAuthHandler = (*Handler)(nil)

// New returns the handler of the MCP server at serverURL; name (the
// server's alias) is what the person is told they sign in to. A nil cfg
// or opts means the defaults.
func New(serverURL, name string, cfg *Config, opts *Options) (*Handler, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("oauth: %q is not an http(s) URL", serverURL)
	}
	h := &Handler{server: StoreKey(serverURL), name: name, opts: opts.withDefaults(), now: time.Now}
	if cfg != nil {
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("oauth: %w", err)
		}
		h.cfg = *cfg
		h.cfg.Scopes = slices.Clone(cfg.Scopes)
		if pemText := cfg.PrivateKey; pemText != "" || cfg.PrivateKeyFile != "" {
			if cfg.PrivateKeyFile != "" {
				b, err := os.ReadFile(cfg.PrivateKeyFile)
				if err != nil {
					return nil, fmt.Errorf("oauth: private_key_file: %w", err)
				}
				pemText = string(b)
			}
			if h.key, err = parseSigningKey(pemText, cfg.SigningAlgorithm); err != nil {
				return nil, fmt.Errorf("oauth: %w", err)
			}
		}
	}
	if h.name == "" {
		h.name = u.Host
	}
	return h, nil
}

// TokenSource implements auth.OAuthHandler: the handler itself, whose
// Token is the stored token (refreshed when it has expired), or none
// before the first sign-in.
func (h *Handler) TokenSource(context.Context) (oauth2.TokenSource, error) { return h, nil }

// Token returns the bearer token to send, refreshing an expired one. It
// returns no token (and no error) when there is none to send: the server
// then answers 401 and Authorize signs in.
func (h *Handler) Token() (*oauth2.Token, error) {
	h.tmu.Lock()
	defer h.tmu.Unlock()
	h.loadLocked()
	now := h.now()
	if h.creds.valid(now) {
		return bearer(h.creds), nil
	}
	if h.creds == nil || h.creds.RefreshToken == "" {
		return nil, nil
	}
	// Another lcp process may have refreshed it already (and the refresh
	// token may be single-use).
	if s, err := h.opts.Store.Load(h.server); err == nil && s.valid(now) {
		h.creds = s
		return bearer(s), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.refreshLocked(ctx); err != nil {
		return nil, nil
	}
	return bearer(h.creds), nil
}

func bearer(c *Credentials) *oauth2.Token {
	return &oauth2.Token{AccessToken: c.AccessToken, TokenType: "Bearer", Expiry: c.Expiry}
}

// Credentials returns a copy of the server's current credentials, or nil.
func (h *Handler) Credentials() *Credentials {
	h.tmu.Lock()
	defer h.tmu.Unlock()
	h.loadLocked()
	if h.creds == nil {
		return nil
	}
	c := *h.creds
	c.Scopes = slices.Clone(c.Scopes)
	return &c
}

// SignOut forgets the server's tokens and registered client, here and in
// the store.
func (h *Handler) SignOut() error {
	h.tmu.Lock()
	h.creds, h.loaded = nil, true
	h.tmu.Unlock()
	return h.opts.Store.Delete(h.server)
}

func (h *Handler) loadLocked() {
	if h.loaded {
		return
	}
	h.loaded = true
	c, err := h.opts.Store.Load(h.server)
	if err != nil {
		h.opts.Logger.Warn("oauth: cannot read the token store", "server", h.name, "error", err)
		return
	}
	h.creds = c
}

// refreshLocked trades the refresh token for a new access token. A
// refused refresh forgets the tokens (keeping the client), so that the
// next 401 signs in again.
func (h *Handler) refreshLocked(ctx context.Context) error {
	c := h.creds
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {c.RefreshToken}}
	if c.Resource != "" {
		form.Set("resource", c.Resource)
	}
	nc, err := requestToken(ctx, h.opts.HTTPClient, c.TokenURL, h.storedClient(c), form, h.now())
	if err != nil {
		h.opts.Logger.Info("oauth: refreshing the token failed; the next request signs in again", "server", h.name, "error", err)
		var te *TokenError
		if errors.As(err, &te) {
			cp := *c
			cp.AccessToken, cp.RefreshToken, cp.Expiry = "", "", time.Time{}
			h.creds = &cp
			h.save(&cp)
		}
		return err
	}
	cp := *c
	cp.AccessToken, cp.Expiry = nc.AccessToken, nc.Expiry
	if nc.RefreshToken != "" {
		cp.RefreshToken = nc.RefreshToken
	}
	if len(nc.Scopes) > 0 {
		cp.Scopes = nc.Scopes
	}
	h.creds = &cp
	h.save(&cp)
	h.opts.Logger.Debug("oauth: token refreshed", "server", h.name, "credentials", &cp)
	return nil
}

// storedClient is the client the stored tokens were issued to. The secret
// of a pre-registered client comes from the configuration, not the store.
func (h *Handler) storedClient(c *Credentials) client {
	cl := client{id: c.ClientID, secret: c.ClientSecret, method: c.AuthMethod}
	if !c.Registered && c.ClientID == h.cfg.ClientID {
		cl.secret = h.cfg.ClientSecret
	}
	if cl.method == "" {
		cl.method = authNone
	}
	return cl
}

func (h *Handler) save(c *Credentials) {
	stored := *c
	if !c.Registered && c.ClientID == h.cfg.ClientID {
		stored.ClientSecret = "" // it stays in the configuration
	}
	if err := h.opts.Store.Save(h.server, &stored); err != nil {
		h.opts.Logger.Warn("oauth: cannot save the tokens; they last for this process only", "server", h.name, "error", err)
	}
}

// Authorize implements auth.OAuthHandler: the server refused req with
// resp (401, or 403 with insufficient_scope); get a token that it takes.
// A nil error makes the transport send the request again.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))

	params := bearerChallenge(resp.Header.Values("WWW-Authenticate"))
	step := resp.StatusCode == http.StatusForbidden
	// A 403 asks for more scope with error="insufficient_scope" (RFC 6750);
	// some servers (the Go SDK's middleware) only name the scope.
	if step && params["error"] != "insufficient_scope" && (params["error"] != "" || params["scope"] == "") {
		// Forbidden for another reason: no token would help.
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	sent, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if cur := h.Credentials(); cur != nil && cur.AccessToken != "" && cur.AccessToken != sent {
		// Another request signed in while this one was on its way.
		return nil
	}
	if h.lastErr != nil && h.now().Sub(h.lastErrAt) < failureMemory {
		return h.lastErr
	}
	err := h.authorize(ctx, params, step, sent)
	if err != nil {
		err = &Error{Server: h.server, Err: err}
		if ctx.Err() == nil {
			h.lastErr, h.lastErrAt = err, h.now()
		}
		return err
	}
	h.lastErr = nil
	return nil
}

// bearerChallenge returns the parameters of the Bearer challenge of a
// WWW-Authenticate header (with the SDK's parser), or none.
func bearerChallenge(headers []string) map[string]string {
	cs, err := oauthex.ParseWWWAuthenticate(headers)
	if err != nil {
		return map[string]string{}
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params != nil {
			return c.Params
		}
	}
	return map[string]string{}
}

func (h *Handler) authorize(ctx context.Context, params map[string]string, step bool, sent string) error {
	old := h.Credentials()
	if !step && sent != "" && sent != h.refreshed && old != nil && old.AccessToken == sent && old.RefreshToken != "" {
		// A token the server should take was refused (revoked early, or the
		// server restarted): a refresh may be all it takes. Once: a server
		// that refuses the refreshed token too gets a new sign-in.
		h.tmu.Lock()
		err := h.refreshLocked(ctx)
		if err == nil {
			h.refreshed = h.creds.AccessToken
		}
		h.tmu.Unlock()
		if err == nil {
			return nil
		}
	}
	d, err := h.discover(ctx, params["resource_metadata"])
	if err != nil {
		return err
	}
	var granted []string
	if old != nil && old.AccessToken != "" && old.AccessToken == sent {
		granted = old.Scopes
	}
	scopes := h.scopes(d, params["scope"], step, granted)
	if step && subset(scopes, union(granted, h.asked)) {
		// Asking again for what was asked before would loop: the
		// authorization server does not grant it, or the server does not
		// take it.
		return fmt.Errorf("the server asks for scope %q, which lcp asked for already (granted: %q): not asking again", strings.Join(scopes, " "), strings.Join(granted, " "))
	}
	if step {
		h.asked = union(h.asked, scopes)
	} else {
		h.asked = slices.Clone(scopes)
	}
	var nc *Credentials
	if h.cfg.Grant == GrantClientCredentials {
		nc, err = h.clientCredentials(ctx, d, scopes)
	} else {
		nc, err = h.authorizationCode(ctx, d, scopes, old)
	}
	if err != nil {
		return err
	}
	nc.Issuer, nc.TokenURL, nc.Resource = d.meta.Issuer, d.meta.TokenEndpoint, d.resource
	if len(nc.Scopes) == 0 {
		nc.Scopes = scopes
	}
	h.tmu.Lock()
	h.creds, h.loaded = nc, true
	h.tmu.Unlock()
	h.save(nc)
	h.opts.Logger.Info("oauth: signed in", "server", h.name, "credentials", nc)
	return nil
}

// scopes picks what to ask for, as the MCP specification's scope
// selection strategy says: the configured scopes, else the challenge's,
// else the resource's scopes_supported, else none (the parameter is then
// left out). A step-up keeps what was granted.
func (h *Handler) scopes(d *discovery, challenge string, step bool, granted []string) []string {
	var s []string
	switch {
	case len(h.cfg.Scopes) > 0:
		s = slices.Clone(h.cfg.Scopes)
		if step {
			s = union(s, strings.Fields(challenge))
		}
	case challenge != "":
		s = strings.Fields(challenge)
	default:
		s = slices.Clone(d.scopesSupported)
	}
	if step {
		s = union(granted, s)
	}
	// A refresh token saves the person a sign-in when the access token
	// expires; OpenID providers give one only for offline_access.
	if h.cfg.Grant != GrantClientCredentials && len(s) > 0 && slices.Contains(d.meta.ScopesSupported, "offline_access") && !slices.Contains(s, "offline_access") {
		s = append(s, "offline_access")
	}
	return s
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

// tokenAuthMethod picks how a client with secret authenticates, from what
// the authorization server supports (client_secret_basic is the default
// of RFC 6749 that every server must accept).
func tokenAuthMethod(secret string, supported []string) string {
	switch {
	case secret == "":
		return authNone
	case len(supported) == 0 || slices.Contains(supported, authBasic):
		return authBasic
	case slices.Contains(supported, authPost):
		return authPost
	case slices.Contains(supported, authNone):
		return authNone
	}
	return authBasic
}

// clientCredentials gets a token for the configured client itself
// (RFC 6749, section 4.4): machines, no person.
func (h *Handler) clientCredentials(ctx context.Context, d *discovery, scopes []string) (*Credentials, error) {
	cl := client{id: h.cfg.ClientID, secret: h.cfg.ClientSecret, method: tokenAuthMethod(h.cfg.ClientSecret, d.meta.TokenEndpointAuthMethodsSupported)}
	form := url.Values{"grant_type": {GrantClientCredentials}, "resource": {d.resource}}
	if h.key != nil {
		a, err := h.key.assertion(cl.id, d.meta.Issuer, h.now())
		if err != nil {
			return nil, err
		}
		cl.method = authJWT
		form.Set("client_assertion_type", assertionType)
		form.Set("client_assertion", a)
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	nc, err := requestToken(ctx, h.opts.HTTPClient, d.meta.TokenEndpoint, cl, form, h.now())
	if err != nil {
		return nil, err
	}
	nc.ClientID, nc.AuthMethod = cl.id, cl.method
	nc.RefreshToken = "" // a new token is simply asked for again
	return nc, nil
}

// authorizationCode signs the person in through their browser: the
// authorization code grant with PKCE (S256), a state parameter, and the
// redirect to a one-time listener on 127.0.0.1.
func (h *Handler) authorizationCode(ctx context.Context, d *discovery, scopes []string, old *Credentials) (*Credentials, error) {
	if h.opts.NoSignIn {
		return nil, ErrSignInRequired
	}
	if d.meta.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("the authorization server %s has no authorization_endpoint", d.meta.Issuer)
	}
	state := rand.Text()
	verifier := oauth2.GenerateVerifier()

	// A client lcp registered before is tied to its redirect URI: listen on
	// the same port when it is free.
	port := h.cfg.RedirectPort
	reuse := old != nil && old.Registered && old.ClientID != "" && issuersEqual(old.Issuer, d.meta.Issuer)
	if port == 0 && reuse {
		port = portOf(old.RedirectURI)
	}
	rcv, err := listenLoopback(port, h.name, state)
	if err != nil && port != 0 && h.cfg.RedirectPort == 0 {
		rcv, err = listenLoopback(0, h.name, state)
	}
	if err != nil {
		return nil, err
	}
	defer rcv.close()
	redirect := rcv.redirectURI()

	cl, registered, err := h.pickClient(ctx, d, redirect, scopes, old)
	if err != nil {
		return nil, err
	}
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {cl.id},
		"redirect_uri":          {redirect},
		"state":                 {state},
		"code_challenge":        {oauth2.S256ChallengeFromVerifier(verifier)},
		"code_challenge_method": {"S256"},
		"resource":              {d.resource},
	}
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	authURL, err := withQuery(d.meta.AuthorizationEndpoint, q)
	if err != nil {
		return nil, err
	}

	limit := h.opts.SignInTimeout
	fmt.Fprintf(h.opts.Out, "lcp: the MCP server %q asks you to sign in. Open this link in your browser (lcp tries to open it for you):\n\n    %s\n\nWaiting up to %s for the sign-in to complete.\n", h.name, authURL, limit)
	if err := h.opts.OpenURL(authURL); err != nil {
		h.opts.Logger.Debug("oauth: no browser opened; the link is printed", "server", h.name, "error", err)
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cb, err := rcv.wait(wctx)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("nobody completed the sign-in within %s", limit)
		}
		return nil, err
	}
	// RFC 9207: the issuer in the response defends against mix-up attacks.
	// It is compared as a string, exactly (section 2.4): no case folding,
	// no trailing slash forgiven, whatever the metadata advertises.
	switch {
	case cb.iss != "" && cb.iss != d.meta.Issuer:
		return nil, fmt.Errorf("the authorization response comes from the issuer %q, not %q", clean(cb.iss), d.meta.Issuer)
	case cb.iss == "" && d.meta.AuthorizationResponseIssParameterSupported:
		return nil, fmt.Errorf("the authorization response lacks the iss parameter its server promises")
	}
	form := url.Values{
		"grant_type":    {GrantAuthorizationCode},
		"code":          {cb.code},
		"redirect_uri":  {redirect},
		"code_verifier": {verifier},
		"resource":      {d.resource},
	}
	nc, err := requestToken(ctx, h.opts.HTTPClient, d.meta.TokenEndpoint, cl, form, h.now())
	if err != nil {
		return nil, err
	}
	nc.ClientID, nc.AuthMethod = cl.id, cl.method
	if registered {
		nc.ClientSecret, nc.Registered, nc.RedirectURI = cl.secret, true, redirect
	}
	return nc, nil
}

// pickClient decides who lcp is to the authorization server, in the order
// of the MCP specification: a client ID metadata document when the server
// supports them, a pre-registered client, a client lcp registered before,
// a new dynamic registration. registered tells the last two apart from
// the configured ones.
func (h *Handler) pickClient(ctx context.Context, d *discovery, redirect string, scopes []string, old *Credentials) (cl client, registered bool, err error) {
	id := h.cfg.ClientID
	switch {
	case isURL(id) && d.meta.ClientIDMetadataDocumentSupported:
		return client{id: id, method: authNone}, false, nil
	case id != "" && !isURL(id):
		return client{id: id, secret: h.cfg.ClientSecret, method: tokenAuthMethod(h.cfg.ClientSecret, d.meta.TokenEndpointAuthMethodsSupported)}, false, nil
	case old != nil && old.Registered && old.ClientID != "" && issuersEqual(old.Issuer, d.meta.Issuer) && old.RedirectURI == redirect:
		return client{id: old.ClientID, secret: old.ClientSecret, method: old.AuthMethod}, true, nil
	}
	if d.meta.RegistrationEndpoint == "" {
		msg := fmt.Sprintf("the authorization server %s offers no dynamic client registration", d.meta.Issuer)
		if isURL(id) {
			msg += " nor client ID metadata documents"
		}
		return client{}, false, errors.New(msg + `: register a client with it and give its id as "oauth": {"client_id": ...}`)
	}
	meta := &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{redirect},
		TokenEndpointAuthMethod: authNone,
		GrantTypes:              []string{GrantAuthorizationCode, "refresh_token"},
		ResponseTypes:           []string{"code"},
		ClientName:              h.opts.ClientName,
		ApplicationType:         "native",
		Scope:                   strings.Join(scopes, " "),
	}
	reg, err := register(ctx, h.opts.HTTPClient, d.meta.RegistrationEndpoint, meta)
	if err != nil {
		var re *registrationError
		if d.fallback && d.prmURL == "" && errors.As(err, &re) && re.status == http.StatusNotFound {
			return client{}, false, fmt.Errorf("the server asks for a token but publishes no OAuth metadata (none at %s, nor under %s) and has no registration endpoint at %s: give a token in \"headers\", or a pre-registered client in \"oauth\"",
				strings.Join(d.looked, ", "), d.meta.Issuer+"/.well-known/", d.meta.RegistrationEndpoint)
		}
		return client{}, false, err
	}
	method := reg.TokenEndpointAuthMethod
	if method == "" {
		method = tokenAuthMethod(reg.ClientSecret, nil)
	}
	h.opts.Logger.Debug("oauth: registered a client", "server", h.name, "client_id", reg.ClientID, "method", method)
	return client{id: reg.ClientID, secret: reg.ClientSecret, method: method}, true, nil
}

func withQuery(endpoint string, q url.Values) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("authorization_endpoint %q: %w", endpoint, err)
	}
	all := u.Query()
	for k, v := range q {
		all[k] = v
	}
	u.RawQuery = all.Encode()
	return u.String(), nil
}

func portOf(redirect string) int {
	u, err := url.Parse(redirect)
	if err != nil {
		return 0
	}
	var p int
	_, _ = fmt.Sscanf(u.Port(), "%d", &p)
	return p
}

func issuersEqual(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}
