package oauth_test

import (
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/mcp/oauth"
)

// A handler plugs into the SDK's streamable HTTP transport; the stored
// token of an earlier sign-in is sent without asking anybody.
func ExampleNew() {
	const server = "https://mcp.example.com/mcp"
	store := &oauth.MemoryStore{}
	_ = store.Save(server, &oauth.Credentials{
		Issuer: "https://auth.example.com", ClientID: "lcp", AccessToken: "token-from-an-earlier-sign-in",
		Expiry: time.Now().Add(time.Hour),
	})
	h, err := oauth.New(server, "example", &oauth.Config{Scopes: []string{"tools"}}, &oauth.Options{Store: store})
	if err != nil {
		panic(err)
	}
	transport := &sdk.StreamableClientTransport{Endpoint: server, OAuthHandler: h}
	_ = transport

	tok, _ := h.Token()
	fmt.Println(tok.Type(), len(tok.AccessToken) > 0)
	// Output: Bearer true
}
