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
	_ "github.com/lcptools/lcp/sandbox/boot" // the sandbox's init, entered before the heavy packages initialize
	"github.com/lcptools/lcp/tool"
)

// cimdURL is the client ID metadata document the suite's authorization
// servers accept as a client id when they support such documents.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// alias names the suite's server in lcp's inventory.
const alias = "suite"

func main() {
	sandbox.Main() // first: this binary is also the sandbox's init (sandbox/boot enters it sooner)
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
	// ToolCalls are the calls a scenario asks for, when it names them.
	ToolCalls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolCalls"`
}

// call is one tool call of a plan.
type call struct {
	tool string          // the tool to call
	args json.RawMessage // its arguments
	want string          // a text the result must contain, if any
}

// plan is what the fixture does for a scenario: the calls it makes, in
// order, after listing the tools.
type plan struct {
	calls []call
	// listed calls every tool lcp lists, with a string for each of its
	// required parameters: a scenario that serves tools lcp must refuse
	// judges that the others are called and these never are.
	listed bool
}

func planFor(scenario string, sc scenarioContext) (plan, error) {
	one := func(tool, args, want string) plan {
		return plan{calls: []call{{tool: tool, args: json.RawMessage(args), want: want}}}
	}
	switch {
	case len(sc.ToolCalls) > 0:
		// The scenario says which calls to make (http-custom-headers).
		var p plan
		for _, c := range sc.ToolCalls {
			args := c.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			p.calls = append(p.calls, call{tool: c.Name, args: args})
		}
		return p, nil
	case scenario == "initialize", scenario == "request-metadata", scenario == "json-schema-ref-no-deref":
		return plan{}, nil
	case scenario == "tools_call":
		return one("add_numbers", `{"a":5,"b":3}`, "8"), nil
	case scenario == "elicitation-sep1034-client-defaults":
		return one("test_client_elicitation_defaults", `{}`, "Elicitation completed"), nil
	case scenario == "sse-retry":
		return one("test_reconnection", `{}`, "Reconnection test completed"), nil
	case scenario == "sep-2322-client-request-state":
		return plan{calls: []call{
			{tool: "test_mrtr_echo_state", args: json.RawMessage(`{}`), want: "echo-state-ok"},
			{tool: "test_mrtr_unrelated", args: json.RawMessage(`{}`), want: "unrelated-ok"},
			{tool: "test_mrtr_no_state", args: json.RawMessage(`{}`), want: "no-state-ok"},
			{tool: "test_mrtr_no_result_type", args: json.RawMessage(`{}`), want: "no-result-type-test-ok"},
		}}, nil
	case scenario == "http-standard-headers":
		return plan{calls: []call{
			{tool: "test_headers", args: json.RawMessage(`{}`), want: "Headers test completed"},
			{tool: "my-hyphenated-tool", args: json.RawMessage(`{}`), want: "Headers test completed"},
		}}, nil
	case scenario == "http-invalid-tool-headers":
		return plan{listed: true}, nil
	case strings.HasPrefix(scenario, "auth/"):
		return one("test-tool", `{}`, "test"), nil
	}
	return plan{}, fmt.Errorf("unknown scenario %q", scenario)
}

// argumentsFor is a string for each required parameter of a schema.
func argumentsFor(schema json.RawMessage) json.RawMessage {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	args := map[string]string{}
	for _, name := range s.Required {
		args[name] = "x"
	}
	raw, _ := json.Marshal(args)
	return raw
}

// serverConfig is the configuration entry of the suite's server, as a
// user would write it.
func serverConfig(url, scenario string, c scenarioContext) mcp.ServerConfig {
	sc := mcp.ServerConfig{Alias: alias, Type: mcp.TypeHTTP, URL: url, OAuth: &oauth.Config{ClientID: cimdURL}}
	switch {
	case c.ClientID == "":
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		sc.OAuth = &oauth.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, PrivateKey: c.PrivateKeyPEM, SigningAlgorithm: c.SigningAlgorithm, Grant: oauth.GrantClientCredentials}
	default:
		sc.OAuth = &oauth.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret}
	}
	return sc
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	scenario := getenv("MCP_CONFORMANCE_SCENARIO")
	if len(args) == 0 || scenario == "" {
		fmt.Fprintln(stderr, "usage: MCP_CONFORMANCE_SCENARIO=<scenario> client <server URL>")
		return 2
	}
	var c scenarioContext
	if raw := getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			fmt.Fprintln(stderr, "client: MCP_CONFORMANCE_CONTEXT:", err)
			return 2
		}
	}
	p, err := planFor(scenario, c)
	if err != nil {
		fmt.Fprintln(stderr, "client:", err)
		return 2
	}
	sc := serverConfig(args[len(args)-1], scenario, c)
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
	if len(remote.Diagnostics()) > 0 {
		return 1
	}
	calls := p.calls
	if p.listed {
		for _, info := range infos {
			name := strings.TrimPrefix(info.Name, alias+mcp.Separator)
			calls = append(calls, call{tool: name, args: argumentsFor(info.InputSchema)})
		}
	}

	broker := hitl.New(person{}, nil)
	defer broker.Close()
	for _, cl := range calls {
		res, err := tool.Call(ctx, remote, alias+mcp.Separator+cl.tool, cl.args, &tool.CallOptions{Respond: broker.Respond})
		if err != nil {
			fmt.Fprintln(stderr, "client: calling", cl.tool+":", err)
			return 1
		}
		out := res.Output
		fmt.Fprintf(stdout, "%s: %s\n", cl.tool, out)
		if !res.Success {
			fmt.Fprintln(stderr, "client: the tool failed:", res.Error)
			return 1
		}
		if cl.want != "" && !strings.Contains(string(out), cl.want) {
			fmt.Fprintf(stderr, "client: the result of %s lacks %q\n", cl.tool, cl.want)
			return 1
		}
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
