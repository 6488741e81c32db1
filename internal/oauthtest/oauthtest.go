// Package oauthtest is a fake OAuth 2.1 authorization server and a
// protected resource in front of any handler, on httptest servers, for
// the tests of lcp's OAuth client. They check what a real server checks
// (PKCE S256, the state round trip, client authentication, redirect URIs,
// scopes) and record every request, so that tests can assert on the wire.
package oauthtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// ServerOptions shape an AuthServer.
type ServerOptions struct {
	// Prefix is the path of the issuer under the server's origin
	// ("/tenant1"); its metadata is then at the path-inserted well-known
	// URL.
	Prefix string
	// Issuer overrides the issuer the metadata names.
	Issuer string
	// NoMetadata serves no metadata (the endpoints stay at their default
	// places under the issuer).
	NoMetadata bool
	// RawMetadata, when set, is served verbatim as the metadata document.
	RawMetadata string
	// PKCEMethods are the code_challenge_methods_supported; nil means
	// ["S256"], an empty non-nil slice leaves the field out.
	PKCEMethods []string
	// NoRegistration leaves out the registration endpoint.
	NoRegistration bool
	// CIMD advertises client ID metadata documents.
	CIMD bool
	// AuthMethods are the token_endpoint_auth_methods_supported; nil
	// means all three.
	AuthMethods []string
	// RegisterAuthMethod is the method a registration response gives;
	// "none" by default (a public client without secret).
	RegisterAuthMethod string
	// ScopesSupported are advertised in the metadata.
	ScopesSupported []string
	// ExpiresIn is the lifetime of access tokens in seconds; 3600 when 0.
	ExpiresIn int
	// Deny makes the authorization endpoint redirect with this error.
	Deny string
	// Iss is sent as the iss parameter of the redirect when set; the
	// text ISSUER in it stands for the server's own issuer (so that
	// "ISSUER/" is its trailing-slash variant).
	Iss string
	// AdvertiseIss sets authorization_response_iss_parameter_supported.
	AdvertiseIss bool
	// Clients are pre-registered clients: id to secret ("" for public).
	Clients map[string]string
	// Withhold are scopes never granted, whatever is asked.
	Withhold []string
}

// TokenRequest is a request the token endpoint got.
type TokenRequest struct {
	Form      url.Values
	BasicUser string // the client id of HTTP Basic authentication
	BasicPass string
}

type pending struct {
	challenge, client, redirect, resource string
	scopes                                []string
}

type grant struct {
	scopes   []string
	resource string
	expiry   time.Time
	client   string
}

// AuthServer is the fake authorization server.
type AuthServer struct {
	*httptest.Server
	opts ServerOptions
	t    testing.TB

	mu             sync.Mutex
	Authorizations []url.Values
	TokenRequests  []TokenRequest
	Registrations  []map[string]any
	MetadataHits   []string
	clients        map[string]string // id → secret
	codes          map[string]pending
	tokens         map[string]grant
	refresh        map[string]grant
	n              int
}

// NewAuthServer starts a fake authorization server, closed with the test.
func NewAuthServer(t testing.TB, opts ServerOptions) *AuthServer {
	a := &AuthServer{opts: opts, t: t, clients: map[string]string{}, codes: map[string]pending{}, tokens: map[string]grant{}, refresh: map[string]grant{}}
	for id, secret := range opts.Clients {
		a.clients[id] = secret
	}
	mux := http.NewServeMux()
	p := opts.Prefix
	mux.HandleFunc("GET /.well-known/oauth-authorization-server"+p, a.metadata)
	mux.HandleFunc("GET "+p+"/authorize", a.authorize)
	mux.HandleFunc("POST "+p+"/token", a.token)
	mux.HandleFunc("POST "+p+"/register", a.register)
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

// Issuer is the issuer URL: the server's URL and Prefix.
func (a *AuthServer) Issuer() string { return a.URL + a.opts.Prefix }

func (a *AuthServer) metadata(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.MetadataHits = append(a.MetadataHits, r.URL.Path)
	a.mu.Unlock()
	if a.opts.NoMetadata {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if a.opts.RawMetadata != "" {
		fmt.Fprint(w, a.opts.RawMetadata)
		return
	}
	iss := a.Issuer()
	m := map[string]any{
		"issuer":                   iss,
		"authorization_endpoint":   iss + "/authorize",
		"token_endpoint":           iss + "/token",
		"response_types_supported": []string{"code"},
		"grant_types_supported":    []string{"authorization_code", "refresh_token", "client_credentials"},
	}
	if a.opts.Issuer != "" {
		m["issuer"] = a.opts.Issuer
	}
	switch {
	case a.opts.PKCEMethods == nil:
		m["code_challenge_methods_supported"] = []string{"S256"}
	case len(a.opts.PKCEMethods) > 0:
		m["code_challenge_methods_supported"] = a.opts.PKCEMethods
	}
	if !a.opts.NoRegistration {
		m["registration_endpoint"] = iss + "/register"
	}
	if a.opts.CIMD {
		m["client_id_metadata_document_supported"] = true
	}
	if a.opts.AuthMethods == nil {
		m["token_endpoint_auth_methods_supported"] = []string{"none", "client_secret_basic", "client_secret_post"}
	} else {
		m["token_endpoint_auth_methods_supported"] = a.opts.AuthMethods
	}
	if a.opts.ScopesSupported != nil {
		m["scopes_supported"] = a.opts.ScopesSupported
	}
	if a.opts.AdvertiseIss {
		m["authorization_response_iss_parameter_supported"] = true
	}
	_ = json.NewEncoder(w).Encode(m)
}

func (a *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.Authorizations = append(a.Authorizations, q)
	a.mu.Unlock()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Scheme != "http" || (redirect.Hostname() != "127.0.0.1" && redirect.Hostname() != "::1") {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	id := q.Get("client_id")
	a.mu.Lock()
	_, known := a.clients[id]
	a.mu.Unlock()
	if !known && !(a.opts.CIMD && strings.HasPrefix(id, "https://")) {
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	}
	back := redirect.Query()
	back.Set("state", q.Get("state"))
	if a.opts.Iss != "" {
		back.Set("iss", strings.ReplaceAll(a.opts.Iss, "ISSUER", a.Issuer()))
	}
	switch {
	case a.opts.Deny != "":
		back.Set("error", a.opts.Deny)
		back.Set("error_description", "the person said no")
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		back.Set("error", "invalid_request")
	default:
		a.mu.Lock()
		a.n++
		code := fmt.Sprintf("code-%d", a.n)
		a.codes[code] = pending{challenge: q.Get("code_challenge"), client: id, redirect: q.Get("redirect_uri"), resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope"))}
		a.mu.Unlock()
		back.Set("code", code)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func tokenError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": "fake server: " + code})
}

// authenticate returns the client a token request is from, checking its
// secret.
func (a *AuthServer) authenticate(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	a.mu.Lock()
	want, known := a.clients[id]
	a.mu.Unlock()
	if !known {
		return id, a.opts.CIMD && strings.HasPrefix(id, "https://") && secret == ""
	}
	return id, want == secret
}

func (a *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	tr := TokenRequest{Form: r.PostForm}
	tr.BasicUser, tr.BasicPass, _ = r.BasicAuth()
	a.mu.Lock()
	a.TokenRequests = append(a.TokenRequests, tr)
	a.mu.Unlock()
	id, ok := a.authenticate(r)
	if !ok {
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	f := r.PostForm
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		a.mu.Lock()
		p, found := a.codes[f.Get("code")]
		delete(a.codes, f.Get("code"))
		a.mu.Unlock()
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !found || p.client != id:
			tokenError(w, http.StatusBadRequest, "invalid_grant")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != p.challenge:
			tokenError(w, http.StatusBadRequest, "invalid_grant")
			return
		case f.Get("redirect_uri") != p.redirect || f.Get("resource") != p.resource:
			tokenError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		g = grant{resource: p.resource, client: id}
		for _, sc := range p.scopes {
			if !slices.Contains(a.opts.Withhold, sc) {
				g.scopes = append(g.scopes, sc)
			}
		}
	case "refresh_token":
		a.mu.Lock()
		old, found := a.refresh[f.Get("refresh_token")]
		delete(a.refresh, f.Get("refresh_token")) // single use
		a.mu.Unlock()
		if !found || old.client != id {
			tokenError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		g = old
		if res := f.Get("resource"); res != "" {
			g.resource = res
		}
	case "client_credentials":
		if a.clients[id] == "" {
			tokenError(w, http.StatusUnauthorized, "invalid_client")
			return
		}
		g = grant{scopes: strings.Fields(f.Get("scope")), resource: f.Get("resource"), client: id}
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	life := a.opts.ExpiresIn
	if life == 0 {
		life = 3600
	}
	g.expiry = time.Now().Add(time.Duration(life) * time.Second)
	a.mu.Lock()
	a.n++
	access := fmt.Sprintf("access-token-%d-secret", a.n)
	refresh := fmt.Sprintf("refresh-token-%d-secret", a.n)
	a.tokens[access] = g
	if f.Get("grant_type") != "client_credentials" {
		a.refresh[refresh] = g
	} else {
		refresh = ""
	}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	resp := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": life}
	if refresh != "" {
		resp["refresh_token"] = refresh
	}
	if len(g.scopes) > 0 {
		resp["scope"] = strings.Join(g.scopes, " ")
	}
	_ = json.NewEncoder(w).Encode(resp)
}

func (a *AuthServer) register(w http.ResponseWriter, r *http.Request) {
	var m map[string]any
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.Registrations = append(a.Registrations, m)
	a.n++
	id := fmt.Sprintf("registered-client-%d", a.n)
	method := a.opts.RegisterAuthMethod
	if method == "" {
		method = "none"
	}
	secret := ""
	if method != "none" {
		secret = fmt.Sprintf("registered-secret-%d-xyz", a.n)
	}
	a.clients[id] = secret
	a.mu.Unlock()
	resp := map[string]any{"client_id": id, "token_endpoint_auth_method": method, "redirect_uris": m["redirect_uris"]}
	if secret != "" {
		resp["client_secret"] = secret
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(resp)
}

// Verify tells whether token is a live access token for resource, and its
// scopes.
func (a *AuthServer) Verify(token, resource string) ([]string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	g, ok := a.tokens[token]
	if !ok || time.Now().After(g.expiry) || (resource != "" && g.resource != "" && strings.TrimSuffix(g.resource, "/") != strings.TrimSuffix(resource, "/")) {
		return nil, false
	}
	return g.scopes, true
}

// Revoke invalidates every access token (as a server restart would).
func (a *AuthServer) Revoke() {
	a.mu.Lock()
	a.tokens = map[string]grant{}
	a.mu.Unlock()
}

// Counts returns how many authorizations, token requests and
// registrations the server got.
func (a *AuthServer) Counts() (authorizations, tokens, registrations int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.Authorizations), len(a.TokenRequests), len(a.Registrations)
}

// LastAuthorization returns the query of the last authorization request.
func (a *AuthServer) LastAuthorization() url.Values {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.Authorizations) == 0 {
		return nil
	}
	return a.Authorizations[len(a.Authorizations)-1]
}

// LastToken returns the last token request.
func (a *AuthServer) LastToken() TokenRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.TokenRequests) == 0 {
		return TokenRequest{}
	}
	return a.TokenRequests[len(a.TokenRequests)-1]
}

// ResourceOptions shape a Resource.
type ResourceOptions struct {
	// PRMPath is where the protected resource metadata is served;
	// "/.well-known/oauth-protected-resource/mcp" when empty, none when
	// "-".
	PRMPath string
	// NoChallengeURL leaves resource_metadata out of WWW-Authenticate.
	NoChallengeURL bool
	// Resource overrides the resource the metadata names.
	Resource string
	// RawPRM, when set, is served verbatim as the metadata.
	RawPRM string
	// PRMContentType overrides application/json.
	PRMContentType string
	// AuthServers overrides the authorization_servers of the metadata.
	AuthServers []string
	// Scopes are required of every request; ChallengeScope puts them in
	// the challenge.
	Scopes         []string
	ChallengeScope bool
	// ScopesSupported are advertised in the metadata.
	ScopesSupported []string
	// Open passes every request of /mcp to the handler unchecked, for a
	// handler that checks tokens itself (the SDK's middleware).
	Open bool
	// StepUp maps a JSON-RPC method to the scopes it needs beyond Scopes:
	// a token without them gets 403 insufficient_scope.
	StepUp map[string][]string
}

// Resource is a protected resource: next behind bearer tokens of an
// AuthServer, at /mcp.
type Resource struct {
	*httptest.Server
	as   *AuthServer
	opts ResourceOptions
	next http.Handler

	mu       sync.Mutex
	Rejected int // requests answered 401 or 403
}

// NewResource starts a protected resource, closed with the test.
func NewResource(t testing.TB, as *AuthServer, opts ResourceOptions, next http.Handler) *Resource {
	r := &Resource{as: as, opts: opts, next: next}
	mux := http.NewServeMux()
	if p := r.prmPath(); p != "" {
		mux.HandleFunc("GET "+p, r.prm)
	}
	mux.HandleFunc("/mcp", r.serve)
	r.Server = httptest.NewServer(mux)
	t.Cleanup(r.Close)
	return r
}

func (r *Resource) prmPath() string {
	switch r.opts.PRMPath {
	case "":
		return "/.well-known/oauth-protected-resource/mcp"
	case "-":
		return ""
	}
	return r.opts.PRMPath
}

// Options returns the resource's options, to change before requests.
func (r *Resource) Options() *ResourceOptions { return &r.opts }

// Endpoint is the URL of the MCP endpoint.
func (r *Resource) Endpoint() string { return r.URL + "/mcp" }

func (r *Resource) prm(w http.ResponseWriter, _ *http.Request) {
	ct := r.opts.PRMContentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	if r.opts.RawPRM != "" {
		fmt.Fprint(w, r.opts.RawPRM)
		return
	}
	res := r.opts.Resource
	if res == "" {
		res = r.Endpoint()
		if r.prmPath() == "/.well-known/oauth-protected-resource" {
			res = r.URL
		}
	}
	servers := r.opts.AuthServers
	if servers == nil && r.as != nil {
		servers = []string{r.as.Issuer()}
	}
	m := map[string]any{"resource": res, "authorization_servers": servers}
	if r.opts.ScopesSupported != nil {
		m["scopes_supported"] = r.opts.ScopesSupported
	}
	_ = json.NewEncoder(w).Encode(m)
}

func (r *Resource) challenge(w http.ResponseWriter, status int, scopes []string, errCode string) {
	var params []string
	if errCode != "" {
		params = append(params, fmt.Sprintf("error=%q", errCode))
	}
	if len(scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(scopes, " ")))
	}
	if p := r.prmPath(); p != "" && !r.opts.NoChallengeURL {
		params = append(params, fmt.Sprintf("resource_metadata=%q", r.URL+p))
	}
	h := "Bearer"
	if len(params) > 0 {
		h += " " + strings.Join(params, ", ")
	}
	w.Header().Set("WWW-Authenticate", h)
	r.mu.Lock()
	r.Rejected++
	r.mu.Unlock()
	http.Error(w, http.StatusText(status), status)
}

func (r *Resource) serve(w http.ResponseWriter, req *http.Request) {
	if r.opts.Open {
		r.next.ServeHTTP(w, req)
		return
	}
	tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	var challengeScopes []string
	if r.opts.ChallengeScope {
		challengeScopes = r.opts.Scopes
	}
	if !ok || r.as == nil {
		r.challenge(w, http.StatusUnauthorized, challengeScopes, "")
		return
	}
	granted, live := r.as.Verify(tok, "")
	if !live {
		r.challenge(w, http.StatusUnauthorized, challengeScopes, "invalid_token")
		return
	}
	need := slices.Clone(r.opts.Scopes)
	if len(r.opts.StepUp) > 0 && req.Body != nil && req.Method == http.MethodPost {
		var msg struct {
			Method string `json:"method"`
		}
		body, _ := readAll(req)
		_ = json.Unmarshal(body, &msg)
		need = append(need, r.opts.StepUp[msg.Method]...)
	}
	for _, s := range need {
		if !slices.Contains(granted, s) {
			r.challenge(w, http.StatusForbidden, need, "insufficient_scope")
			return
		}
	}
	r.next.ServeHTTP(w, req)
}

// Browser plays the person's browser: Open follows the authorization
// server's redirects to the client's loopback listener, and records the
// URL.
type Browser struct {
	mu     sync.Mutex
	opened []string
}

// Open is an oauth.Options.OpenURL.
func (b *Browser) Open(u string) error {
	b.mu.Lock()
	b.opened = append(b.opened, u)
	b.mu.Unlock()
	go func() {
		c := &http.Client{Timeout: 10 * time.Second}
		// Errors show as the sign-in that never completes.
		if resp, err := c.Get(u); err == nil {
			resp.Body.Close()
		}
	}()
	return nil
}

// Opened returns the URLs opened so far.
func (b *Browser) Opened() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.opened)
}

func readAll(req *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	req.Body = io.NopCloser(bytes.NewReader(b))
	return b, err
}
