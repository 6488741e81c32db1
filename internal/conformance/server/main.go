//lint:file-ignore SA1019 the fixture serves the suite's sampling and roots scenarios: deprecated from 2026-07-28 on (SEP-2577), still tested by the suite on both wires

// Command server is lcp's fixture for the server scenarios of the
// official MCP conformance suite (@modelcontextprotocol/conformance).
//
//	server ADDR
//
// serves streamable HTTP at http://ADDR/mcp ("127.0.0.1:0" picks a free
// port) and prints that URL on its standard output once it listens.
//
// It is a host of lcp like any other, built on its public API: an engine
// of the LCP Python library in testdata (embedded) and of native Go
// tools, served by lcp's MCP server. The Python tools are served under the
// names the suite calls with tool.Rename (tool_simple_text as
// test_simple_text...); their rich results follow lcp's convention (the
// "_lcp_content" key), their sampling goes through
// lollms_client_instance.generate_text, their logging and progress
// through the log_handler and progress_handler the worker injects. The
// forms (tool.AskForm) and the tool with a JSON Schema 2020-12 input
// schema are native tools.
// The prompts are the library's system prompt and prompts registered
// with tool.NewPrompts; the resources are added with Server.AddResource.
// Calls that run long are polled (HTTPOptions.PollAfter): the suite's
// test_reconnection is one.
package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed testdata/suite_tools.py
var library embed.FS

// pollAfter is how long a call runs before its event stream is closed
// for the client to poll; test_reconnection runs longer.
const pollAfter = 500 * time.Millisecond

func main() {
	sandbox.Main() // first: this binary is also the sandbox's init
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: server ADDR (host:port, e.g. 127.0.0.1:3000)")
		return 2
	}
	ln, err := mcp.Listen(args[0], nil)
	if err != nil {
		fmt.Fprintln(stderr, "server:", err)
		return 2
	}
	srv, cleanup, err := newServer(ctx)
	if err != nil {
		ln.Close()
		fmt.Fprintln(stderr, "server:", err)
		return 1
	}
	defer cleanup()
	fmt.Fprintf(stdout, "http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ctx, ln, &mcp.HTTPOptions{PollAfter: pollAfter}); err != nil && !errors.Is(err, net.ErrClosed) {
		fmt.Fprintln(stderr, "server:", err)
		return 1
	}
	return 0
}

// renames are the suite's names of the Python tools.
var renames = map[string]string{
	"tool_simple_text":            "test_simple_text",
	"tool_image_content":          "test_image_content",
	"tool_audio_content":          "test_audio_content",
	"tool_embedded_resource":      "test_embedded_resource",
	"tool_multiple_content_types": "test_multiple_content_types",
	"tool_error_handling":         "test_error_handling",
	"tool_sampling":               "test_sampling",
	"tool_with_logging":           "test_tool_with_logging",
	"tool_with_progress":          "test_tool_with_progress",
}

// newServer builds the engine and its MCP server.
func newServer(ctx context.Context) (*mcp.Server, func(), error) {
	dir, err := os.MkdirTemp("", "lcp-conformance-")
	if err != nil {
		return nil, nil, err
	}
	tools := filepath.Join(dir, "tools")
	src, err := fs.ReadFile(library, "testdata/suite_tools.py")
	if err == nil {
		err = os.MkdirAll(tools, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(tools, "suite_tools.py"), src, 0o644)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	natives, err := nativeTools()
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	prompts, err := hostPrompts()
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	eng, err := lcp.New(ctx, &lcp.Config{
		ToolsFolders: []string{tools},
		Workspace:    dir,
		Toolsets:     []tool.Toolset{natives},
		Prompts:      prompts,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	served, err := tool.Rename(eng, renames)
	if err != nil {
		eng.Close()
		os.RemoveAll(dir)
		return nil, nil, err
	}
	changing := &changingTools{}
	srv := mcp.NewServer(tool.Compose(served, changing), &mcp.ServerOptions{Name: "lcp-conformance-server", Version: "1.0.0", Prompts: eng})
	changing.srv = srv
	if err := addResources(srv); err != nil {
		srv.Close()
		eng.Close()
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return srv, func() {
		srv.Close()
		eng.Close()
		os.RemoveAll(dir)
	}, nil
}

// schema2020 is the suite's input schema with JSON Schema 2020-12
// keywords, served intact.
const schema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},` +
	`"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
	`"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`

// The forms of the elicitation scenarios.
const (
	userForm = `{"type":"object","properties":{` +
		`"username":{"type":"string","description":"User's response"},` +
		`"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`
	defaultsForm = `{"type":"object","properties":{` +
		`"name":{"type":"string","default":"John Doe"},` +
		`"age":{"type":"integer","default":30},` +
		`"score":{"type":"number","default":95.5},` +
		`"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","default":true}}}`
	enumsForm = `{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`
)

// nativeTools are the fixture's Go tools.
func nativeTools() (*native.Toolset, error) {
	var (
		tools []*native.Tool
		errs  []error
	)
	add := func(t *native.Tool, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		tools = append(tools, t)
	}
	noArgs := json.RawMessage(`{"type":"object","properties":{}}`)
	add(native.Func(tool.Info{Name: "test_reconnection", Description: "Runs long enough for its event stream to be closed and resumed (SSE polling).", InputSchema: noArgs},
		func(ctx context.Context, _ map[string]any) (any, error) {
			if err := sleep(ctx, 3*pollAfter); err != nil {
				return nil, err
			}
			return "Reconnection test completed successfully", nil
		}))
	add(native.Raw(tool.Info{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features", InputSchema: json.RawMessage(schema2020)},
		func(_ context.Context, args json.RawMessage) (any, error) {
			return "Received: " + string(args), nil
		}))
	add(native.Func(tool.Info{Name: "test_header_param", Description: "Echoes its region, which clients mirror into the Mcp-Param-Region header (SEP-2243).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`)},
		func(_ context.Context, args map[string]any) (any, error) {
			return fmt.Sprintf("region: %v", args["region"]), nil
		}))
	form := func(name, desc, schema, prefix string, message func(map[string]any) string) {
		t, err := native.Func(tool.Info{Name: name, Description: desc, InputSchema: inputOf(name)},
			func(ctx context.Context, args map[string]any) (any, error) {
				v, err := tool.AskForm(ctx, "", message(args), json.RawMessage(schema), true)
				var declined *tool.InteractionDeclinedError
				var cancelled *tool.CancelledError
				switch {
				case errors.As(err, &declined):
					return prefix + "action=decline", nil
				case errors.As(err, &cancelled):
					return prefix + "action=cancel", nil
				case err != nil:
					return nil, err
				}
				b, _ := json.Marshal(v)
				return prefix + "action=accept, content=" + string(b), nil
			})
		if err != nil {
			errs = append(errs, err)
			return
		}
		tools = append(tools, t.Interactive(tool.Capabilities{Form: true, FormValidation: true}))
	}
	form("test_elicitation", "Asks the user for a name and an email address.", userForm, "User response: ",
		func(args map[string]any) string { s, _ := args["message"].(string); return s })
	form("test_elicitation_sep1034_defaults", "Asks for a form whose fields have defaults (SEP-1034).", defaultsForm, "Elicitation completed: ",
		func(map[string]any) string { return "Please review your profile" })
	form("test_elicitation_sep1330_enums", "Asks for a form with every kind of choice (SEP-1330).", enumsForm, "Elicitation completed: ",
		func(map[string]any) string { return "Please make your choices" })
	tools = append(tools, inputRequiredTools(&errs)...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return native.New(nil, tools...)
}

// inputOf returns the input schema of a form tool: test_elicitation
// takes the message to show.
func inputOf(name string) json.RawMessage {
	if name == "test_elicitation" {
		return json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`)
	}
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return tool.ContextError(ctx, "")
	}
}

// A 1x1 red PNG, for the prompt with an image and the binary resource.
var pixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde" +
	"\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82")

// hostPrompts are the prompts the suite gets, registered as a Go host
// registers its own.
func hostPrompts() (*tool.PromptList, error) {
	user := func(c tool.Content) tool.PromptMessage { return tool.PromptMessage{Role: "user", Content: c} }
	cities := []string{"paris", "park", "party", "perth", "porto"}
	return tool.NewPrompts(
		tool.PromptDef{
			Prompt: tool.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
			Get: func(context.Context, map[string]string) (*tool.PromptResult, error) {
				return &tool.PromptResult{Messages: []tool.PromptMessage{user(tool.TextContent("This is a simple prompt for testing."))}}, nil
			},
		},
		tool.PromptDef{
			Prompt: tool.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments",
				Arguments: []tool.PromptArgument{
					{Name: "arg1", Description: "First test argument", Required: true},
					{Name: "arg2", Description: "Second test argument", Required: true},
				}},
			Get: func(_ context.Context, args map[string]string) (*tool.PromptResult, error) {
				text := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])
				return &tool.PromptResult{Messages: []tool.PromptMessage{user(tool.TextContent(text))}}, nil
			},
			Complete: func(_ context.Context, arg, value string, _ map[string]string) ([]string, error) {
				var out []string
				for _, c := range cities {
					if arg == "arg1" && strings.HasPrefix(c, value) {
						out = append(out, c)
					}
				}
				return out, nil
			},
		},
		tool.PromptDef{
			Prompt: tool.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt with an embedded resource",
				Arguments: []tool.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
			Get: func(_ context.Context, args map[string]string) (*tool.PromptResult, error) {
				return &tool.PromptResult{Messages: []tool.PromptMessage{
					user(tool.ResourceContent(args["resourceUri"], "text/plain", "Embedded resource content for testing.")),
					user(tool.TextContent("Please process the embedded resource above.")),
				}}, nil
			},
		},
		tool.PromptDef{
			Prompt: tool.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks the user for its context"},
			Get: func(ctx context.Context, _ map[string]string) (*tool.PromptResult, error) {
				got, err := mcp.AskClient(ctx, map[string]sdk.InputRequest{"user_context": &sdk.ElicitParams{
					Message:         "What context should the prompt use?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`),
				}})
				if err != nil {
					return nil, err
				}
				res, _ := got["user_context"].(*sdk.ElicitResult)
				if res == nil || res.Action != "accept" {
					return &tool.PromptResult{Messages: []tool.PromptMessage{user(tool.TextContent("Work without a context."))}}, nil
				}
				return &tool.PromptResult{Messages: []tool.PromptMessage{user(tool.TextContent(fmt.Sprintf("Work in this context: %v", res.Content["context"])))}}, nil
			},
		},
		tool.PromptDef{
			Prompt: tool.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
			Get: func(context.Context, map[string]string) (*tool.PromptResult, error) {
				return &tool.PromptResult{Messages: []tool.PromptMessage{
					user(tool.ImageContent(pixel, "image/png")),
					user(tool.TextContent("Please analyze the image above.")),
				}}, nil
			},
		},
	)
}

// addResources serves the suite's resources.
func addResources(srv *mcp.Server) error {
	text := func(uri, mime, s string) func(context.Context, string) ([]tool.Content, error) {
		return func(context.Context, string) ([]tool.Content, error) {
			return []tool.Content{tool.ResourceContent(uri, mime, s)}, nil
		}
	}
	for _, r := range []mcp.Resource{
		{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain",
			Read: text("test://static-text", "text/plain", "This is the content of the static text resource.")},
		{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (a PNG)", MIMEType: "image/png",
			Read: func(context.Context, string) ([]tool.Content, error) {
				return []tool.Content{tool.BlobContent("test://static-binary", "image/png", pixel)}, nil
			}},
		{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource clients may subscribe to", MIMEType: "text/plain",
			Read: text("test://watched-resource", "text/plain", "Watched resource content.")},
	} {
		if err := srv.AddResource(r); err != nil {
			return err
		}
	}
	return srv.AddResourceTemplate(mcp.Resource{URI: "test://template/{id}/data", Name: "template-data",
		Description: "Data for an id", MIMEType: "application/json",
		Read: func(_ context.Context, uri string) ([]tool.Content, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(uri, "test://template/"), "/data")
			data, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return []tool.Content{tool.ResourceContent(uri, "application/json", string(data))}, nil
		}})
}

// ask puts a form to the caller under a key of the tool's choosing (the
// key of its input request on the 2026-07-28 wire) and returns the
// answer, or a word that says it was declined.
func ask(ctx context.Context, key, message, schema string) (map[string]any, string, error) {
	resp, err := tool.Ask(ctx, &tool.Request{ID: key, Kind: tool.KindForm, Prompt: message, Schema: json.RawMessage(schema), Validate: true})
	if err != nil {
		return nil, "", err
	}
	if resp.Action != tool.Submit {
		return nil, string(resp.Action), nil
	}
	v, _ := resp.Value.(map[string]any)
	return v, "", nil
}

// inputRequiredTools are the tools of the multi-round-trip scenarios
// (SEP-2322, input-required-result-*): they ask as any native tool does;
// lcp's server turns each question into an input request.
func inputRequiredTools(errs *[]error) []*native.Tool {
	noArgs := json.RawMessage(`{"type":"object","properties":{}}`)
	const (
		nameForm  = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
		okForm    = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
		colorForm = `{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`
	)
	var out []*native.Tool
	add := func(name, desc string, fn func(ctx context.Context) (any, error)) {
		t, err := native.Func(tool.Info{Name: name, Description: desc, InputSchema: noArgs},
			func(ctx context.Context, _ map[string]any) (any, error) { return fn(ctx) })
		if err != nil {
			*errs = append(*errs, err)
			return
		}
		out = append(out, t.Interactive(tool.Capabilities{Form: true, FormValidation: true}))
	}
	add("test_input_required_result_elicitation", "Asks for the user's name, then greets them.", func(ctx context.Context) (any, error) {
		v, no, err := ask(ctx, "user_name", "What is your name?", nameForm)
		if err != nil || no != "" {
			return "No name given (" + no + ")", err
		}
		return fmt.Sprintf("Hello, %v!", v["name"]), nil
	})
	add("test_input_required_result_sampling", "Asks the client's model for the capital of France.", func(ctx context.Context) (any, error) {
		return tool.Generate(ctx, "What is the capital of France?", json.RawMessage(`{"n_predict":100}`))
	})
	confirm := func(name, desc string) {
		add(name, desc, func(ctx context.Context) (any, error) {
			v, no, err := ask(ctx, "confirm", "Please confirm", okForm)
			if err != nil || no != "" {
				return "Not confirmed (" + no + ")", err
			}
			return fmt.Sprintf("state-ok: ok=%v", v["ok"]), nil
		})
	}
	confirm("test_input_required_result_request_state", "Asks for a confirmation; its answer comes back with the request state.")
	confirm("test_input_required_result_tampered_state", "Asks for a confirmation whose request state is signed.")
	add("test_input_required_result_multi_round", "Asks two questions, one after the other.", func(ctx context.Context) (any, error) {
		v1, no, err := ask(ctx, "step1", "Step 1: What is your name?", nameForm)
		if err != nil || no != "" {
			return "Stopped at step 1 (" + no + ")", err
		}
		v2, no, err := ask(ctx, "step2", "Step 2: What is your favorite color?", colorForm)
		if err != nil || no != "" {
			return "Stopped at step 2 (" + no + ")", err
		}
		return fmt.Sprintf("%v likes %v", v1["name"], v2["color"]), nil
	})
	add("test_input_required_result_capabilities", "Asks the user, then the client's model: only what the client can answer is asked.", func(ctx context.Context) (any, error) {
		v, no, err := ask(ctx, "user_name", "What is your name?", nameForm)
		if err != nil {
			return nil, err
		}
		text, err := tool.Generate(ctx, "Say hello", nil)
		if err != nil {
			return nil, err
		}
		return fmt.Sprintf("name: %v %s; model: %s", v["name"], no, text), nil
	})
	// The client itself, asked through lcp's MCP server (mcp.AskClient):
	// its roots, and three requests in one round.
	raw := func(name, desc string, fn func(ctx context.Context) (any, error)) {
		t, err := native.Func(tool.Info{Name: name, Description: desc, InputSchema: noArgs},
			func(ctx context.Context, _ map[string]any) (any, error) { return fn(ctx) })
		if err != nil {
			*errs = append(*errs, err)
			return
		}
		out = append(out, t)
	}
	raw("test_input_required_result_list_roots", "Lists the client's roots.", func(ctx context.Context) (any, error) {
		roots, err := mcp.ClientRoots(ctx)
		if err != nil {
			return nil, err
		}
		return "roots: " + rootNames(roots), nil
	})
	raw("test_input_required_result_multiple_inputs", "Asks the user, the client's model and the client's roots at once.", func(ctx context.Context) (any, error) {
		got, err := mcp.AskClient(ctx, map[string]sdk.InputRequest{
			"user_name": &sdk.ElicitParams{Message: "What is your name?", RequestedSchema: json.RawMessage(nameForm)},
			"greeting": &sdk.CreateMessageParams{MaxTokens: 50,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Generate a greeting"}}}},
			"client_roots": &sdk.ListRootsParams{},
		})
		if err != nil {
			return nil, err
		}
		name, _ := got["user_name"].(*sdk.ElicitResult)
		greeting, _ := got["greeting"].(*sdk.CreateMessageResult)
		roots, _ := got["client_roots"].(*sdk.ListRootsResult)
		if name == nil || greeting == nil || roots == nil {
			return nil, fmt.Errorf("answers of the wrong kind: %T, %T, %T", got["user_name"], got["greeting"], got["client_roots"])
		}
		text, _ := greeting.Content.(*sdk.TextContent)
		if text == nil {
			text = &sdk.TextContent{}
		}
		return fmt.Sprintf("name: %v; greeting: %s; roots: %s", name.Content["name"], text.Text, rootNames(roots.Roots)), nil
	})
	add("test_streaming_elicitation", "Answers at once: its response stream carries only its result.", func(context.Context) (any, error) {
		return "stream observed: result frames only", nil
	})
	add("test_logging_tool", "Logs a record, then answers (clients that set no log level get no record).", func(ctx context.Context) (any, error) {
		tool.Log(ctx, "info", "a record of test_logging_tool")
		return "logged", nil
	})
	add("test_missing_capability", "Needs the client's model (sampling).", func(ctx context.Context) (any, error) {
		return tool.Generate(ctx, "Say hello", nil)
	})
	return out
}

// rootNames lists roots by their URIs.
func rootNames(roots []*sdk.Root) string {
	uris := make([]string, len(roots))
	for i, r := range roots {
		uris[i] = r.URI
	}
	return strings.Join(uris, ", ")
}

// changingTools serves test_trigger_tool_change, which makes another tool
// appear or go, as a watched folder does when its files change, and tells
// the server (Server.ToolsChanged, what lcp mcp --watch calls): clients
// listening for tool list changes are told.
type changingTools struct {
	srv *mcp.Server
	on  atomic.Bool
}

var noArgsSchema = json.RawMessage(`{"type":"object","properties":{}}`)

func (c *changingTools) Tools(context.Context) ([]tool.Info, error) {
	infos := []tool.Info{{Name: "test_trigger_tool_change", Description: "Adds or removes test_changing_tool.", InputSchema: noArgsSchema}}
	if c.on.Load() {
		infos = append(infos, tool.Info{Name: "test_changing_tool", Description: "Comes and goes.", InputSchema: noArgsSchema})
	}
	return infos, nil
}

func (c *changingTools) Handler(_ context.Context, name string) (tool.Handler, error) {
	info, _ := c.Tools(context.Background())
	for i := range info {
		if info[i].Name != name {
			continue
		}
		return tool.NewHandler(&info[i], func(ctx context.Context, _ *tool.CallRequest) (*tool.Result, error) {
			if name == "test_changing_tool" {
				return &tool.Result{Success: true, StatusCode: 200, Output: json.RawMessage(`"still here"`)}, nil
			}
			c.on.Store(!c.on.Load())
			if err := c.srv.ToolsChanged(ctx); err != nil {
				return nil, err
			}
			return &tool.Result{Success: true, StatusCode: 200, Output: json.RawMessage(fmt.Sprintf(`"test_changing_tool listed: %v"`, c.on.Load()))}, nil
		}, nil), nil
	}
	return nil, &tool.UnknownToolError{Name: name}
}

func (c *changingTools) Close() error { return nil }
