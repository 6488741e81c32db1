// Command client is lcp's fixture for the client scenarios of the
// official MCP conformance suite (@modelcontextprotocol/conformance).
//
// It is an embedder of lcp like any other: it describes the suite's
// server as one streamable HTTP entry of an MCP configuration, opens it
// with mcp.NewClientToolset, and calls its tools with tool.Call through a
// hitl broker. The suite runs it as
//
//	MCP_CONFORMANCE_SCENARIO=<scenario> [MCP_CONFORMANCE_CONTEXT=<json>] client <server URL>
//
// and judges what reaches its servers; the fixture only does what a user
// of lcp would do with such a server: list its tools and call the one the
// scenario is about. OAuth happens inside lcp's client when the server
// asks for it; the browser is played by an HTTP client that follows the
// authorization server's redirect back to lcp's loopback listener, and
// the person of elicitation forms accepts what the form proposes.
//
// It exits 0 when the call succeeded, 1 when it failed (some scenarios,
// such as auth/resource-mismatch, expect exactly that) and 2 on misuse.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/mcp/oauth"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// cimdURL is the client ID metadata document the suite's authorization
// servers accept as a client id when they support such documents.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// alias names the suite's server in lcp's inventory.
const alias = "suite"

func main() {
	sandbox.Main() // first: this binary is also the sandbox's init
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// scenarioContext is MCP_CONFORMANCE_CONTEXT: credentials a scenario hands
// its client.
type scenarioContext struct {
	Name             string `json:"name"`
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
}

// plan is what the fixture does for a scenario.
type plan struct {
	tool string          // the tool to call, empty for none
	args json.RawMessage // its arguments
	want string          // a text the result must contain, if any
}

func planFor(scenario string) (plan, error) {
	switch {
	case scenario == "initialize":
		return plan{}, nil
	case scenario == "tools_call":
		return plan{tool: "add_numbers", args: json.RawMessage(`{"a":5,"b":3}`), want: "8"}, nil
	case scenario == "elicitation-sep1034-client-defaults":
		return plan{tool: "test_client_elicitation_defaults", args: json.RawMessage(`{}`), want: "Elicitation completed"}, nil
	case scenario == "sse-retry":
		return plan{tool: "test_reconnection", args: json.RawMessage(`{}`), want: "Reconnection test completed"}, nil
	case strings.HasPrefix(scenario, "auth/"):
		return plan{tool: "test-tool", args: json.RawMessage(`{}`), want: "test"}, nil
	}
	return plan{}, fmt.Errorf("unknown scenario %q", scenario)
}

// serverConfig is the configuration entry of the suite's server, as a
// user would write it.
func serverConfig(url, scenario, rawContext string) (mcp.ServerConfig, error) {
	sc := mcp.ServerConfig{Alias: alias, Type: mcp.TypeHTTP, URL: url, OAuth: &oauth.Config{ClientID: cimdURL}}
	if rawContext == "" {
		return sc, nil
	}
	var c scenarioContext
	if err := json.Unmarshal([]byte(rawContext), &c); err != nil {
		return sc, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	switch {
	case c.ClientID == "":
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		sc.OAuth = &oauth.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, PrivateKey: c.PrivateKeyPEM, SigningAlgorithm: c.SigningAlgorithm, Grant: oauth.GrantClientCredentials}
	default:
		sc.OAuth = &oauth.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret}
	}
	return sc, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	scenario := getenv("MCP_CONFORMANCE_SCENARIO")
	if len(args) == 0 || scenario == "" {
		fmt.Fprintln(stderr, "usage: MCP_CONFORMANCE_SCENARIO=<scenario> client <server URL>")
		return 2
	}
	p, err := planFor(scenario)
	if err != nil {
		fmt.Fprintln(stderr, "client:", err)
		return 2
	}
	sc, err := serverConfig(args[len(args)-1], scenario, getenv("MCP_CONFORMANCE_CONTEXT"))
	if err != nil {
		fmt.Fprintln(stderr, "client:", err)
		return 2
	}
	if err := sc.Validate(); err != nil {
		fmt.Fprintln(stderr, "client:", err)
		return 2
	}

	ctx, cancel := context.WithTimeout(ctx, 25*time.Second) // the suite gives 30 s
	defer cancel()
	remote, err := mcp.NewClientToolset(ctx, []mcp.ServerConfig{sc}, &mcp.ClientOptions{
		Name:           "lcp-conformance-client",
		Version:        "1.0.0",
		ConnectTimeout: 15 * time.Second,
		OAuth: &oauth.Options{
			Store:         &oauth.MemoryStore{},
			OpenURL:       browser(stderr),
			Out:           stderr,
			SignInTimeout: 10 * time.Second,
		},
	})
	if err != nil {
		fmt.Fprintln(stderr, "client:", err)
		return 1
	}
	defer remote.Close()

	infos, err := remote.Tools(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "client: listing tools:", err)
		return 1
	}
	for _, d := range remote.Diagnostics() {
		fmt.Fprintln(stderr, "client:", d.Message)
	}
	fmt.Fprintf(stdout, "%d tools\n", len(infos))
	if p.tool == "" {
		if len(remote.Diagnostics()) > 0 {
			return 1
		}
		return 0
	}

	broker := hitl.New(person{}, nil)
	defer broker.Close()
	res, err := tool.Call(ctx, remote, alias+mcp.Separator+p.tool, p.args, &tool.CallOptions{Respond: broker.Respond})
	if err != nil {
		fmt.Fprintln(stderr, "client: calling", p.tool+":", err)
		return 1
	}
	out := res.Output
	fmt.Fprintf(stdout, "%s: %s\n", p.tool, out)
	if !res.Success {
		fmt.Fprintln(stderr, "client: the tool failed:", res.Error)
		return 1
	}
	if p.want != "" && !strings.Contains(string(out), p.want) {
		fmt.Fprintf(stderr, "client: the result of %s lacks %q\n", p.tool, p.want)
		return 1
	}
	return 0
}

// person answers the questions of a call as someone who accepts what is
// proposed: a form is submitted as it is shown, untouched (lcp's client
// then fills in the defaults the form proposes), a question gets its
// default, a link may be opened.
type person struct{}

func (person) Ask(_ context.Context, r *tool.Request) (tool.Response, error) {
	switch r.Kind {
	case tool.KindForm:
		return r.Submitted(map[string]any{}), nil
	case tool.KindConfirm:
		return r.Submitted(tool.Allow), nil
	}
	return hitl.Unattended{}.Ask(context.Background(), r)
}

// browser plays the person's browser on the authorization page: it
// follows the authorization server's redirects, which end at lcp's
// loopback listener with the code.
func browser(log io.Writer) func(string) error {
	return func(u string) error {
		go func() {
			c := &http.Client{Timeout: 10 * time.Second}
			resp, err := c.Get(u)
			if err != nil {
				fmt.Fprintln(log, "client: browser:", err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
		return nil
	}
}
