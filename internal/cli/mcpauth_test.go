package cli

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/internal/oauthtest"
	"github.com/lcptools/lcp/mcp/oauth"
)

func TestMCPLoginLogout(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.ServerOptions{})
	s := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	rs := oauthtest.NewResource(t, as, oauthtest.ResourceOptions{}, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	conf := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(conf, []byte(`{"mcpServers": {"prot": {"url": "`+rs.Endpoint()+`"}, "local": {"command": "true"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	store := &oauth.MemoryStore{}
	browser := &oauthtest.Browser{}
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	o := &mcpAuthOptions{config: conf, store: store, openURL: browser.Open, timeout: 10 * time.Second}
	if err := runMCPLogin(context.Background(), env, o, nil); err != nil {
		t.Fatalf("login: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "prot: signed in: client \"registered-client") || strings.Contains(out.String(), "local") {
		t.Errorf("login printed:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "/authorize?") {
		t.Errorf("the sign-in link was not printed:\n%s", errb.String())
	}
	if c, _ := store.Load(rs.Endpoint()); c == nil || c.AccessToken == "" {
		t.Fatal("no token stored")
	}
	if strings.Contains(out.String()+errb.String(), "access-token-") {
		t.Error("a token was printed")
	}

	// Signed in already: no second sign-in.
	out.Reset()
	if err := runMCPLogin(context.Background(), env, o, []string{"prot"}); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := as.Counts(); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}

	out.Reset()
	if err := runMCPLogout(env, o, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "signed out of "+rs.Endpoint()) {
		t.Errorf("logout printed %q", out.String())
	}
	if c, _ := store.Load(rs.Endpoint()); c != nil {
		t.Error("logout left the token")
	}
}

func TestMCPLoginUsage(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(conf, []byte(`{"mcpServers": {"local": {"command": "true"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"mcp", "login"},
		{"mcp", "login", "--mcp-config", conf},
		{"mcp", "login", "--mcp-config", conf, "local"},
		{"mcp", "login", "--mcp-config", conf, "nope"},
		{"mcp", "logout", "--all", "--mcp-config", conf},
	} {
		_, errOut, code := run(t, "", args...)
		if code != ExitUsage || errOut == "" {
			t.Errorf("%q: exit %d, %q; want a usage error", args, code, errOut)
		}
	}
}
