package oauth

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	s := &FileStore{Path: filepath.Join(dir, "lcp", "mcp-oauth.json")}
	const server = "https://MCP.example.com/mcp"
	if c, err := s.Load(server); c != nil || err != nil {
		t.Fatalf("empty store: %v, %v", c, err)
	}
	want := &Credentials{Issuer: "https://auth.example.com", ClientID: "c1", AccessToken: "at-secret", RefreshToken: "rt-secret", Expiry: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), Scopes: []string{"a", "b"}}
	if err := s.Save(server, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("https://mcp.example.com/mcp#frag")
	if err != nil || got == nil || got.AccessToken != "at-secret" || !got.Expiry.Equal(want.Expiry) || strings.Join(got.Scopes, " ") != "a b" {
		t.Fatalf("Load = %v, %v", got, err)
	}
	for p, mode := range map[string]os.FileMode{s.Path: 0o600, filepath.Dir(s.Path): 0o700} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s has mode %v, want %v", p, st.Mode().Perm(), mode)
		}
	}
	servers, err := s.Servers()
	if err != nil || len(servers) != 1 || servers[0] != "https://mcp.example.com/mcp" {
		t.Errorf("Servers = %q, %v", servers, err)
	}
	if err := s.Delete(server); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Load(server); c != nil {
		t.Errorf("after Delete: %v", c)
	}
	if err := s.Delete(server); err != nil {
		t.Errorf("deleting twice: %v", err)
	}
}

func TestFileStoreConcurrentWriters(t *testing.T) {
	p := filepath.Join(t.TempDir(), "store.json")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate values, as separate processes would have.
			s := &FileStore{Path: p}
			if err := s.Save(fmt.Sprintf("https://s%d.example/mcp", i), &Credentials{AccessToken: "t"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	servers, err := (&FileStore{Path: p}).Servers()
	if err != nil || len(servers) != 8 {
		t.Fatalf("%d servers after 8 concurrent saves (%v): an update was lost", len(servers), err)
	}
}

func TestFileStoreCorrupt(t *testing.T) {
	p := filepath.Join(t.TempDir(), "store.json")
	if err := os.WriteFile(p, []byte(`{"servers": {"x": {"access_token": "leaked-secret"`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (&FileStore{Path: p}).Load("x")
	if err == nil || !strings.Contains(err.Error(), "delete it to sign in again") {
		t.Fatalf("error = %v", err)
	}
	if strings.Contains(err.Error(), "leaked-secret") {
		t.Error("the error quotes the file")
	}
}

func TestCredentialsString(t *testing.T) {
	c := &Credentials{ClientID: "id", ClientSecret: "cs-secret", AccessToken: "at-secret", RefreshToken: "rt-secret"}
	for _, s := range []string{c.String(), c.GoString(), fmt.Sprintf("%v %+v %#v %s", c, c, c, c), c.LogValue().String()} {
		for _, secret := range []string{"cs-secret", "at-secret", "rt-secret"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q shows %s", s, secret)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string // "" for valid
	}{
		{Config{}, ""},
		{Config{ClientID: "abc", ClientSecret: "s"}, ""},
		{Config{ClientID: "https://app.example/client.json"}, ""},
		{Config{ClientID: "m", ClientSecret: "s", Grant: GrantClientCredentials}, ""},
		{Config{Grant: GrantClientCredentials}, "needs"},
		{Config{ClientID: "https://app.example/c.json", ClientSecret: "s", Grant: GrantClientCredentials}, "not a URL"},
		{Config{Grant: "password"}, "unknown grant"},
		{Config{RedirectPort: 70000}, "not a port"},
		{Config{ClientID: "http://app.example/c.json"}, "https"},
		{Config{ClientSecret: "s"}, "needs a"},
		{Config{Scopes: []string{"a b"}}, "not a scope"},
	} {
		err := c.cfg.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.cfg, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestCoversResource(t *testing.T) {
	const server = "https://mcp.example.com/v1/mcp"
	for named, want := range map[string]bool{
		"https://mcp.example.com/v1/mcp":      true,
		"https://MCP.example.com:443/v1/mcp/": true,
		"https://mcp.example.com/v1":          true,
		"https://mcp.example.com":             true,
		"https://mcp.example.com/v1/mc":       false,
		"https://mcp.example.com/v1/mcp/x":    false,
		"http://mcp.example.com/v1/mcp":       false,
		"https://mcp.example.com:8443/v1/mcp": false,
		"https://evil.example.com/v1/mcp":     false,
		"https://mcp.example.com/v1/mcp#f":    false,
		"mcp.example.com/v1/mcp":              false,
		"":                                    false,
	} {
		if got := coversResource(named, server); got != want {
			t.Errorf("coversResource(%q) = %v, want %v", named, got, want)
		}
	}
}

func TestCandidates(t *testing.T) {
	got := prmCandidates("https://a.example/custom.json", "https://a.example/api/mcp")
	want := []string{"https://a.example/custom.json", "https://a.example/.well-known/oauth-protected-resource/api/mcp", "https://a.example/.well-known/oauth-protected-resource"}
	if len(got) != len(want) {
		t.Fatalf("prmCandidates = %v", got)
	}
	for i := range want {
		if got[i].url != want[i] {
			t.Errorf("candidate %d = %s, want %s", i, got[i].url, want[i])
		}
	}
	as := asMetaCandidates("https://auth.example/tenant1")
	wantAS := []string{"https://auth.example/.well-known/oauth-authorization-server/tenant1", "https://auth.example/.well-known/openid-configuration/tenant1", "https://auth.example/tenant1/.well-known/openid-configuration"}
	if strings.Join(as, " ") != strings.Join(wantAS, " ") {
		t.Errorf("asMetaCandidates = %v", as)
	}
}

func FuzzCoversResource(f *testing.F) {
	f.Add("https://a.example/mcp", "https://a.example/mcp")
	f.Add("https://a.example", "https://a.example/x/y")
	f.Add("https://b.example/mcp", "https://a.example/mcp")
	f.Fuzz(func(t *testing.T, named, server string) {
		if !coversResource(named, server) {
			return
		}
		// Whatever is covered shares the server's origin.
		n, s := mustParse(named), mustParse(server)
		if n == nil || s == nil || !strings.EqualFold(n.Scheme, s.Scheme) || canonicalHost(n) != canonicalHost(s) {
			t.Fatalf("coversResource(%q, %q) across origins", named, server)
		}
	})
}

func FuzzBearerChallenge(f *testing.F) {
	f.Add(`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/.well-known/oauth-protected-resource"`)
	f.Add(`Basic realm="x", Bearer scope=a`)
	f.Add(`Bearer realm="lcp"`)
	f.Fuzz(func(t *testing.T, h string) {
		p := bearerChallenge([]string{h})
		if p == nil {
			t.Fatal("nil parameters")
		}
	})
}

func FuzzTokenResponse(f *testing.F) {
	f.Add(200, "application/json", `{"access_token":"a","token_type":"Bearer","expires_in":3600,"scope":"x y"}`)
	f.Add(400, "application/json", `{"error":"invalid_grant","error_description":"no"}`)
	f.Add(200, "application/json", `{"access_token":"a","expires_in":"60"}`)
	f.Add(200, "text/html", `<html>`)
	f.Fuzz(func(t *testing.T, status int, ct, body string) {
		c, err := parseTokenResponse(status, ct, []byte(body), time.Unix(0, 0))
		if err == nil && (c == nil || c.AccessToken == "") {
			t.Fatalf("accepted a response without a token: %q", body)
		}
		if err != nil && strings.Contains(body, `"access_token":"`) {
			// An error never quotes the body, which may hold a token.
			if i := strings.Index(body, `"access_token":"`); i >= 0 {
				tok := body[i+len(`"access_token":"`):]
				if j := strings.IndexByte(tok, '"'); j > 3 && strings.Contains(err.Error(), tok[:j]) {
					t.Fatalf("error %q quotes the token", err)
				}
			}
		}
	})
}

func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		return nil
	}
	return u
}
