package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/internal/oauthtest"
	"github.com/lcptools/lcp/mcp/oauth"
	"github.com/lcptools/lcp/tool"
)

// protectedServer is an MCP server of the Go SDK behind the SDK's bearer
// token middleware, with tokens of as; resource overrides the resource its
// metadata names.
func protectedServer(t *testing.T, as *oauthtest.AuthServer, resource string) *oauthtest.Resource {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "Says who called."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, struct{}, error) {
		info := req.Extra.TokenInfo
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "scopes: " + strings.Join(info.Scopes, " ")}}}, struct{}{}, nil
	})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	var rs *oauthtest.Resource
	verify := func(_ context.Context, token string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		scopes, ok := as.Verify(token, rs.Endpoint())
		if !ok {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
	}
	// The SDK's middleware guards the endpoint; the resource serves the
	// metadata (RFC 9728) and passes /mcp on.
	var guarded http.Handler
	rs = oauthtest.NewResource(t, as, oauthtest.ResourceOptions{Resource: resource, Open: true}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		guarded.ServeHTTP(w, r)
	}))
	guarded = sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{
		ResourceMetadataURL: rs.URL + "/.well-known/oauth-protected-resource/mcp",
	})(mcpHandler)
	return rs
}

func TestClientSignsInToProtectedServers(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.ServerOptions{})
	good := protectedServer(t, as, "")
	evil := protectedServer(t, as, "https://evil.example.com/mcp")
	open := newTestServer(t, nil)
	browser := &oauthtest.Browser{}
	var out strings.Builder
	store := &oauth.MemoryStore{}
	c := newClient(t, []ServerConfig{
		{Alias: "good", Type: TypeHTTP, URL: good.Endpoint()},
		{Alias: "evil", Type: TypeHTTP, URL: evil.Endpoint()},
		{Alias: "open", Type: TypeHTTP, URL: serveHTTP(t, open, nil)},
	}, &ClientOptions{OAuth: &oauth.Options{Store: store, OpenURL: browser.Open, Out: &syncWriter{w: &out}, SignInTimeout: 10 * time.Second}})

	infos, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range infos {
		names = append(names, i.Name)
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "good::whoami") || !strings.Contains(joined, "open::") || strings.Contains(joined, "evil::") {
		t.Fatalf("tools = %s", joined)
	}
	var diag string
	for _, d := range c.Diagnostics() {
		diag += d.Message + "\n"
	}
	if !strings.Contains(diag, `MCP server "evil"`) || !strings.Contains(diag, "evil.example.com") || !strings.Contains(diag, "not for this server") {
		t.Errorf("diagnostics do not explain the refusal:\n%s", diag)
	}
	if strings.Contains(diag, `"good"`) || strings.Contains(diag, `"open"`) {
		t.Errorf("diagnostics blame a working server:\n%s", diag)
	}
	res, err := tool.Call(context.Background(), c, "good::whoami", json.RawMessage(`{}`), nil)
	if err != nil || !res.Success {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if n, _, _ := as.Counts(); n != 1 || len(browser.Opened()) != 1 {
		t.Errorf("%d authorizations, %d pages opened; want 1 each (only the good server asks)", n, len(browser.Opened()))
	}
	if cr := c.OAuth("good").Credentials(); cr == nil || cr.AccessToken == "" {
		t.Fatal("no credentials kept for the good server")
	}
	if c.OAuth("open") == nil || c.OAuth("nope") != nil {
		t.Error("OAuth handlers by alias are wrong")
	}
	if err := c.OAuth("good").SignOut(); err != nil {
		t.Fatal(err)
	}
	if cr, _ := store.Load(good.Endpoint()); cr != nil {
		t.Error("SignOut left the tokens in the store")
	}
}

func TestConfiguredAuthorizationHeaderDisablesOAuth(t *testing.T) {
	c := newClient(t, []ServerConfig{
		{Alias: "static", Type: TypeHTTP, URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"authorization": "Bearer x"}},
		{Alias: "stdio", Type: TypeStdio, Command: "true"},
	}, &ClientOptions{ConnectTimeout: time.Second, OAuth: &oauth.Options{Store: &oauth.MemoryStore{}}})
	if c.OAuth("static") != nil || c.OAuth("stdio") != nil {
		t.Error("OAuth set up for a server that cannot use it")
	}
}

func TestOAuthConfig(t *testing.T) {
	servers, err := ParseConfig([]byte(`{"mcpServers": {
		"a": {"url": "https://a.example/mcp", "oauth": {"client_id": "lcp", "client_secret": "${LCP_TEST_OAUTH_SECRET:-s3}", "scopes": ["x"]}},
		"b": {"url": "https://b.example/mcp", "oauth": {"grant": "client_credentials", "client_id": "m", "client_secret": "s"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if o := servers[0].OAuth; o == nil || o.ClientID != "lcp" || o.ClientSecret != "s3" || o.Scopes[0] != "x" {
		t.Errorf("a: %+v", servers[0].OAuth)
	}
	if o := servers[1].OAuth; o == nil || o.Grant != oauth.GrantClientCredentials {
		t.Errorf("b: %+v", servers[1].OAuth)
	}
	for conf, want := range map[string]string{
		`[{"alias": "s", "command": "x", "oauth": {}}]`:                                      "HTTP servers only",
		`[{"alias": "s", "url": "https://x/mcp", "oauth": {"grant": "client_credentials"}}]`: "needs",
		`[{"alias": "s", "url": "https://x/mcp", "oauth": {"redirect_port": -1}}]`:           "not a port",
	} {
		_, err := ParseConfig([]byte(conf))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `server "s"`) {
			t.Errorf("%s: error %v, want %q", conf, err, want)
		}
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
