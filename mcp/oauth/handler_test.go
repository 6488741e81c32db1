package oauth

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcptools/lcp/internal/oauthtest"
)

// ok is the protected MCP endpoint's answer once authorized.
var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
})

// env is a fake authorization server, a protected resource and a handler
// of the resource.
type env struct {
	as      *oauthtest.AuthServer
	rs      *oauthtest.Resource
	h       *Handler
	browser *oauthtest.Browser
	store   *MemoryStore
	out     *syncBuffer
	log     *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newEnv(t *testing.T, aso oauthtest.ServerOptions, rso oauthtest.ResourceOptions, cfg *Config) *env {
	t.Helper()
	e := &env{browser: &oauthtest.Browser{}, store: &MemoryStore{}, out: &syncBuffer{}, log: &syncBuffer{}}
	e.as = oauthtest.NewAuthServer(t, aso)
	e.rs = oauthtest.NewResource(t, e.as, rso, ok)
	e.h = e.handler(t, cfg)
	return e
}

func (e *env) handler(t *testing.T, cfg *Config) *Handler {
	t.Helper()
	h, err := New(e.rs.Endpoint(), "fake", cfg, &Options{
		Store:         e.store,
		OpenURL:       e.browser.Open,
		Out:           e.out,
		SignInTimeout: 5 * time.Second,
		Logger:        slog.New(slog.NewJSONHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// call sends an MCP request as the SDK's transport does: with the
// handler's token, and once more after Authorize when it is refused.
func (e *env) call(t *testing.T, method string) (int, error) {
	t.Helper()
	return callWith(e.h, e.rs.Endpoint(), method)
}

func callWith(h *Handler, endpoint, method string) (int, error) {
	do := func() (*http.Request, *http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`"}`))
		req.Header.Set("Content-Type", "application/json")
		tok, err := h.Token()
		if err != nil {
			return nil, nil, err
		}
		if tok != nil {
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
		resp, err := http.DefaultClient.Do(req)
		return req, resp, err
	}
	req, resp, err := do()
	if err != nil {
		return 0, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		if err := h.Authorize(context.Background(), req, resp); err != nil {
			return resp.StatusCode, err
		}
		_, resp, err = do()
		if err != nil {
			return 0, err
		}
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestSignInWithDynamicRegistration(t *testing.T) {
	e := newEnv(t, oauthtest.ServerOptions{}, oauthtest.ResourceOptions{Scopes: []string{"mcp:read"}, ChallengeScope: true, ScopesSupported: []string{"mcp:read", "mcp:write"}}, nil)
	if code, err := e.call(t, "tools/list"); err != nil || code != 200 {
		t.Fatalf("call: %d, %v", code, err)
	}
	a := e.as.LastAuthorization()
	if a == nil {
		t.Fatal("no authorization request")
	}
	redirect, _ := url.Parse(a.Get("redirect_uri"))
	for _, c := range []struct{ what, got, want string }{
		{"scope (from the challenge)", a.Get("scope"), "mcp:read"},
		{"resource", a.Get("resource"), e.rs.Endpoint()},
		{"code_challenge_method", a.Get("code_challenge_method"), "S256"},
		{"redirect host", redirect.Hostname(), "127.0.0.1"},
		{"redirect path", redirect.Path, "/callback"},
		{"client_id", a.Get("client_id"), "registered-client-1"},
	} {
		if c.got != c.want {
			t.Errorf("authorization %s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if len(a.Get("state")) < 20 {
		t.Errorf("state %q is too short to be unguessable", a.Get("state"))
	}
	tr := e.as.LastToken()
	if tr.Form.Get("resource") != e.rs.Endpoint() || tr.Form.Get("code_verifier") == "" {
		t.Errorf("token request lacks resource or verifier: %v", tr.Form)
	}
	_, _, regs := e.as.Counts()
	if regs != 1 {
		t.Errorf("%d registrations, want 1", regs)
	}
	reg := e.as.Registrations[0]
	if reg["token_endpoint_auth_method"] != "none" || reg["client_name"] != "lcp" {
		t.Errorf("registration = %v", reg)
	}
	c, _ := e.store.Load(e.rs.Endpoint())
	if c == nil || c.AccessToken == "" || c.RefreshToken == "" || !c.Registered || c.ClientID != "registered-client-1" {
		t.Fatalf("stored credentials = %v", c)
	}
	if !strings.Contains(e.out.String(), "/authorize?") || !strings.Contains(e.out.String(), `"fake"`) {
		t.Errorf("the person was not shown the link:\n%s", e.out)
	}

	// A second handler (the next run of lcp) uses the stored token.
	h2 := e.handler(t, nil)
	if code, err := callWith(h2, e.rs.Endpoint(), "tools/list"); err != nil || code != 200 {
		t.Fatalf("second run: %d, %v", code, err)
	}
	if n, _, _ := e.as.Counts(); n != 1 {
		t.Errorf("%d authorizations, want 1: the stored token was not used", n)
	}
}

func TestRefresh(t *testing.T) {
	e := newEnv(t, oauthtest.ServerOptions{}, oauthtest.ResourceOptions{}, nil)
	if _, err := e.call(t, "tools/list"); err != nil {
		t.Fatal(err)
	}
	first := e.h.Credentials()
	later := time.Now().Add(2 * time.Hour)
	e.h.now = func() time.Time { return later }
	tok, err := e.h.Token()
	if err != nil || tok == nil {
		t.Fatalf("Token after expiry: %v, %v", tok, err)
	}
	if tok.AccessToken == first.AccessToken {
		t.Fatal("the expired token was not refreshed")
	}
	tr := e.as.LastToken()
	if tr.Form.Get("grant_type") != "refresh_token" || tr.Form.Get("resource") != e.rs.Endpoint() {
		t.Errorf("refresh request = %v", tr.Form)
	}
	stored, _ := e.store.Load(e.rs.Endpoint())
	if stored.AccessToken != tok.AccessToken || stored.RefreshToken == first.RefreshToken {
		t.Errorf("the refreshed (rotated) tokens were not stored: %v", stored)
	}
	if n, _, _ := e.as.Counts(); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
}

func TestRevokedTokenIsRefreshed(t *testing.T) {
	e := newEnv(t, oauthtest.ServerOptions{}, oauthtest.ResourceOptions{}, nil)
	if _, err := e.call(t, "tools/list"); err != nil {
		t.Fatal(err)
	}
	e.as.Revoke()
	if code, err := e.call(t, "tools/list"); err != nil || code != 200 {
		t.Fatalf("after revocation: %d, %v", code, err)
	}
	if n, _, _ := e.as.Counts(); n != 1 {
		t.Errorf("%d authorizations, want 1 (a refresh was enough)", n)
	}
	// A server that refuses the refreshed token as well: sign in anew
	// rather than refresh forever.
	e.as.Revoke()
	if code, err := e.call(t, "tools/list"); err != nil || code != 200 {
		t.Fatalf("after a second revocation: %d, %v", code, err)
	}
	if n, _, _ := e.as.Counts(); n != 2 {
		t.Errorf("%d authorizations, want 2", n)
	}
}

func TestRefusedRefreshSignsInAgain(t *testing.T) {
	e := newEnv(t, oauthtest.ServerOptions{}, oauthtest.ResourceOptions{}, nil)
	if _, err := e.call(t, "tools/list"); err != nil {
		t.Fatal(err)
	}
	c := e.h.Credentials()
	c.RefreshToken = "refresh-token-unknown"
	c.Expiry = time.Now().Add(-time.Minute)
	e.h.creds = c
	_ = e.store.Save(e.rs.Endpoint(), c)
	tok, err := e.h.Token()
	if err != nil || tok != nil {
		t.Fatalf("Token with a refused refresh = %v, %v; want none", tok, err)
	}
	if code, err := e.call(t, "tools/list"); err != nil || code != 200 {
		t.Fatalf("sign-in again: %d, %v", code, err)
	}
	if n, _, regs := e.as.Counts(); n != 2 || regs != 1 {
		t.Errorf("%d authorizations and %d registrations, want 2 and 1 (the client is kept)", n, regs)
	}
}

func TestStepUp(t *testing.T) {
	e := newEnv(t, oauthtest.ServerOptions{}, oauthtest.ResourceOptions{
		Scopes: []string{"mcp:basic"}, ChallengeScope: true,
		StepUp: map[string][]string{"tools/call": {"mcp:write"}, "admin": {"mcp:admin"}},
	}, nil)
	if _, err := e.call(t, "tools/list"); err != nil {
		t.Fatal(err)
	}
	if code, err := e.call(t, "tools/call"); err != nil || code != 200 {
		t.Fatalf("step-up: %d, %v", code, err)
	}
	if got := e.as.LastAuthorization().Get("scope"); got != "mcp:basic mcp:write" {
		t.Errorf("step-up scope = %q, want the union %q", got, "mcp:basic mcp:write")
	}
	// A server that keeps asking for a scope its authorization server
	// never grants is asked once, not in a loop.
	e2 := newEnv(t, oauthtest.ServerOptions{Withhold: []string{"never:granted"}}, oauthtest.ResourceOptions{
		Scopes: []string{"mcp:admin"}, ChallengeScope: true, StepUp: map[string][]string{"tools/call": {"never:granted"}},
	}, nil)
	if _, err := e2.call(t, "tools/list"); err != nil {
		t.Fatal(err)
	}
	var err error
	for range 3 {
		if _, err = e2.call(t, "tools/call"); err != nil && strings.Contains(err.Error(), "not asking again") {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "not asking again") {
		t.Fatalf("endless step-up not stopped: %v", err)
	}
	if a, _, _ := e2.as.Counts(); a != 2 {
		t.Errorf("%d authorizations, want 2 (the sign-in, one step-up)", a)
	}
}

func TestClientCredentials(t *testing.T) {
	e := newEnv(t, oauthtest.ServerOptions{Clients: map[string]string{"machine": "machine-secret-value"}, AuthMethods: []string{"client_secret_basic"}},
		oauthtest.ResourceOptions{ScopesSupported: []string{"jobs"}}, &Config{ClientID: "machine", ClientSecret: "machine-secret-value", Grant: GrantClientCredentials})
	if code, err := e.call(t, "tools/list"); err != nil || code != 200 {
		t.Fatalf("call: %d, %v", code, err)
	}
	tr := e.as.LastToken()
	if tr.Form.Get("grant_type") != "client_credentials" || tr.BasicUser != "machine" || tr.Form.Get("resource") != e.rs.Endpoint() || tr.Form.Get("scope") != "jobs" {
		t.Errorf("token request = %+v", tr)
	}
	if tr.Form.Get("client_secret") != "" {
		t.Error("the secret went in the body although the server asks for HTTP Basic")
	}
	if len(e.browser.Opened()) != 0 {
		t.Error("a browser was opened for a machine")
	}
	stored, _ := e.store.Load(e.rs.Endpoint())
	if stored.ClientSecret != "" {
		t.Error("the configured secret was copied into the token store")
	}
}

func TestPreRegisteredClient(t *testing.T) {
	e := newEnv(t, oauthtest.ServerOptions{Clients: map[string]string{"acme": "acme-secret-value"}, NoRegistration: true, AuthMethods: []string{"client_secret_post"}},
		oauthtest.ResourceOptions{}, &Config{ClientID: "acme", ClientSecret: "acme-secret-value"})
	if code, err := e.call(t, "tools/list"); err != nil || code != 200 {
		t.Fatalf("call: %d, %v", code, err)
	}
	tr := e.as.LastToken()
	if tr.Form.Get("client_id") != "acme" || tr.Form.Get("client_secret") != "acme-secret-value" || tr.BasicUser != "" {
		t.Errorf("token request = %+v, want client_secret_post", tr)
	}
	if _, _, regs := e.as.Counts(); regs != 0 {
		t.Error("registered although a client was configured")
	}
}

func TestClientIDMetadataDocument(t *testing.T) {
	const doc = "https://lcp.example/client.json"
	for _, supported := range []bool{true, false} {
		e := newEnv(t, oauthtest.ServerOptions{CIMD: supported}, oauthtest.ResourceOptions{}, &Config{ClientID: doc})
		if code, err := e.call(t, "tools/list"); err != nil || code != 200 {
			t.Fatalf("CIMD %v: %d, %v", supported, code, err)
		}
		got := e.as.LastAuthorization().Get("client_id")
		_, _, regs := e.as.Counts()
		if supported && (got != doc || regs != 0) {
			t.Errorf("with CIMD support: client_id %q, %d registrations; want the URL and none", got, regs)
		}
		if !supported && (got == doc || regs != 1) {
			t.Errorf("without CIMD support: client_id %q, %d registrations; want a registered client", got, regs)
		}
	}
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name string
		as   oauthtest.ServerOptions
		rs   oauthtest.ResourceOptions
		want string
	}{
		{"resource of another origin", oauthtest.ServerOptions{}, oauthtest.ResourceOptions{Resource: "https://evil.example.com/mcp"}, `is for "https://evil.example.com/mcp", not for this server`},
		{"resource on another path", oauthtest.ServerOptions{}, oauthtest.ResourceOptions{Resource: "PLACEHOLDER/other"}, "not for this server"},
		{"malformed resource metadata", oauthtest.ServerOptions{}, oauthtest.ResourceOptions{RawPRM: `{"resource": `}, "not a valid JSON document"},
		{"resource metadata not JSON", oauthtest.ServerOptions{}, oauthtest.ResourceOptions{PRMContentType: "text/html"}, "not JSON"},
		{"no authorization server", oauthtest.ServerOptions{}, oauthtest.ResourceOptions{AuthServers: []string{}}, "names no authorization server"},
		{"authorization server over plain http", oauthtest.ServerOptions{}, oauthtest.ResourceOptions{AuthServers: []string{"http://auth.example.com"}}, "is not https"},
		{"issuer of another origin", oauthtest.ServerOptions{Issuer: "https://evil.example.com"}, oauthtest.ResourceOptions{}, `names the issuer "https://evil.example.com"`},
		{"no PKCE S256", oauthtest.ServerOptions{PKCEMethods: []string{"plain"}}, oauthtest.ResourceOptions{}, "does not support PKCE with S256"},
		{"malformed server metadata", oauthtest.ServerOptions{RawMetadata: `[1,2`}, oauthtest.ResourceOptions{}, "not a valid JSON document"},
		{"no registration and no client", oauthtest.ServerOptions{NoRegistration: true}, oauthtest.ResourceOptions{}, "offers no dynamic client registration"},
		{"the person refuses", oauthtest.ServerOptions{Deny: "access_denied"}, oauthtest.ResourceOptions{}, "the authorization server refused: access_denied"},
		{"mix-up: another issuer answers", oauthtest.ServerOptions{Iss: "https://evil.example.com"}, oauthtest.ResourceOptions{}, "comes from the issuer"},
		{"iss differs by a trailing slash", oauthtest.ServerOptions{Iss: "ISSUER/"}, oauthtest.ResourceOptions{}, "comes from the issuer"},
		{"promised iss missing", oauthtest.ServerOptions{AdvertiseIss: true}, oauthtest.ResourceOptions{}, "lacks the iss parameter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.as, c.rs, nil)
			if strings.HasPrefix(c.rs.Resource, "PLACEHOLDER") {
				e.rs.Options().Resource = strings.Replace(c.rs.Resource, "PLACEHOLDER", e.rs.URL, 1)
			}
			_, err := e.call(t, "tools/list")
			if err == nil {
				t.Fatal("signed in; want a refusal")
			}
			var oe *Error
			if !errors.As(err, &oe) || oe.Server != e.rs.Endpoint() {
				t.Errorf("error %v does not name the server", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v\nwant it to say %q", err, c.want)
			}
			if c.as.Deny == "" && c.as.Iss == "" && !c.as.AdvertiseIss && len(e.browser.Opened()) > 0 {
				t.Errorf("the person was sent to sign in: %v", e.browser.Opened())
			}
			if c, _ := e.store.Load(e.rs.Endpoint()); c != nil && c.AccessToken != "" {
				t.Error("a token was stored")
			}
			// The same failure is remembered: no second browser tab for the
			// SDK's retry of the handshake.
			opened := len(e.browser.Opened())
			if _, err2 := e.call(t, "initialize"); err2 == nil || len(e.browser.Opened()) != opened {
				t.Errorf("the retry tried again: %v", err2)
			}
		})
	}
}

func TestNoMetadataAtAll(t *testing.T) {
	// A server that answers 401 but publishes nothing, not even the default
	// registration endpoint (lcp's own server with a bearer token, for one).
	srv := oauthtest.NewResource(t, nil, oauthtest.ResourceOptions{PRMPath: "-"}, ok)
	h, err := New(srv.Endpoint(), "plain", nil, &Options{Store: &MemoryStore{}, OpenURL: func(string) error { t.Error("browser opened"); return nil }, Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	_, err = callWith(h, srv.Endpoint(), "initialize")
	if err == nil || !strings.Contains(err.Error(), "publishes no OAuth metadata") || !strings.Contains(err.Error(), `"headers"`) {
		t.Fatalf("error = %v", err)
	}
}

func TestSignInTimeout(t *testing.T) {
	e := newEnv(t, oauthtest.ServerOptions{}, oauthtest.ResourceOptions{}, nil)
	h, err := New(e.rs.Endpoint(), "slow", nil, &Options{Store: e.store, OpenURL: func(string) error { return nil }, Out: e.out, SignInTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = callWith(h, e.rs.Endpoint(), "initialize")
	if err == nil || !strings.Contains(err.Error(), "nobody completed the sign-in within 200ms") {
		t.Fatalf("error = %v", err)
	}
	if !strings.Contains(e.out.String(), "Waiting up to 200ms") {
		t.Errorf("the time limit was not announced:\n%s", e.out)
	}
}

func TestNoSignIn(t *testing.T) {
	e := newEnv(t, oauthtest.ServerOptions{}, oauthtest.ResourceOptions{}, nil)
	h, err := New(e.rs.Endpoint(), "quiet", nil, &Options{Store: e.store, OpenURL: e.browser.Open, NoSignIn: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := callWith(h, e.rs.Endpoint(), "initialize"); !errors.Is(err, ErrSignInRequired) {
		t.Fatalf("error = %v, want ErrSignInRequired", err)
	}
	if len(e.browser.Opened()) != 0 {
		t.Error("browser opened")
	}
}

func TestStrayRedirectIsIgnored(t *testing.T) {
	r, err := listenLoopback(0, "x", "the-state")
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for _, q := range []string{"code=stolen&state=wrong", "code=stolen", "state=the-state"} {
		resp, err := http.Get(r.redirectURI() + "?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", q, resp.StatusCode)
		}
	}
	resp, err := http.Get(r.redirectURI() + "?code=good&state=the-state")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cb, err := r.wait(ctx)
	if err != nil || cb.code != "good" {
		t.Fatalf("wait = %+v, %v", cb, err)
	}
	if !strings.HasPrefix(r.redirectURI(), "http://127.0.0.1:") {
		t.Errorf("redirect URI %q is not on 127.0.0.1", r.redirectURI())
	}
}

func TestSecretsAreNeverShown(t *testing.T) {
	e := newEnv(t, oauthtest.ServerOptions{RegisterAuthMethod: "client_secret_post", ScopesSupported: []string{"a", "offline_access"}},
		oauthtest.ResourceOptions{ScopesSupported: []string{"a"}}, nil)
	if _, err := e.call(t, "tools/list"); err != nil {
		t.Fatal(err)
	}
	e.h.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := e.h.Token(); err != nil {
		t.Fatal(err)
	}
	// A failing refresh and a failing token request are logged too.
	c := e.h.Credentials()
	c.Expiry, c.RefreshToken = time.Now().Add(-time.Hour), "refresh-token-bogus-secret"
	e.h.creds = c
	_ = e.store.Save(e.rs.Endpoint(), c)
	_, _ = e.h.Token()

	var secrets []string
	for _, tr := range e.as.TokenRequests {
		for _, k := range []string{"code", "code_verifier", "refresh_token", "client_secret"} {
			if v := tr.Form.Get(k); v != "" {
				secrets = append(secrets, v)
			}
		}
	}
	stored, _ := e.store.Load(e.rs.Endpoint())
	secrets = append(secrets, stored.ClientSecret, c.AccessToken, "refresh-token-bogus-secret")
	if len(secrets) < 6 {
		t.Fatalf("the flow did not exercise enough secrets: %q", secrets)
	}
	text := e.log.String() + e.out.String() + stored.String() + c.GoString()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("secret %q appears in the logs or the output", s)
		}
	}
	if !strings.Contains(e.log.String(), "signed in") {
		t.Errorf("nothing logged at all:\n%s", e.log)
	}
	if !slices.Contains(strings.Fields(e.as.Authorizations[0].Get("scope")), "offline_access") {
		t.Errorf("offline_access not asked of a server that supports it: %q", e.as.Authorizations[0].Get("scope"))
	}
}
