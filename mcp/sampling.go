//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on (SEP-2577), and still how clients of every revision lend their model to omni-tools

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/tool"
)

// DefaultSamplingMaxTokens bounds the answer of a client's model when the
// tool asks without a limit (MCP requires one).
const DefaultSamplingMaxTokens = 1024

// sampler asks a client's model: sampling/createMessage on the older
// wire, an input request of a round on the newer, a host request of the
// call (hostask.go) for a tool's model.
type sampler = func(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error)

// clientModel is the language model of an MCP client that offers
// sampling: the tool.Generator the server puts in each call of such a
// client, so that omni-tools (lollms_client_instance.generate_text,
// tool.Generate) ask the client's model through sampling/createMessage
// when the host configures none of its own. The client decides, usually
// with its user, whether to answer.
type clientModel struct {
	// create sends the request: to the client on older protocol
	// revisions, as an input request of the call's result on newer.
	create func(ctx context.Context, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error)
	client string
}

// newClientModel returns the model of a client, which create asks, or
// nil when the client does not offer sampling.
func newClientModel(create func(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error), caps *sdk.ClientCapabilities, client string) tool.Generator {
	if create == nil || caps == nil || caps.Sampling == nil {
		return nil
	}
	return &clientModel{create: create, client: client}
}

// GenerateJSON asks the client's model for the completion of prompt, sent
// as one user message; options are generate_text's keyword arguments
// (n_predict, temperature, stop, system_prompt, and model as a hint of the
// model preferences; others are not MCP's and are left out).
func (m *clientModel) GenerateJSON(ctx context.Context, prompt string, options json.RawMessage) (string, error) {
	opts, err := llm.ParseGenerateOptions(options)
	if err != nil {
		return "", err
	}
	p := &sdk.CreateMessageParams{
		Messages:      []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: prompt}}},
		MaxTokens:     int64(opts.MaxTokens),
		SystemPrompt:  opts.System,
		StopSequences: opts.Stop,
	}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultSamplingMaxTokens
	}
	if opts.Temperature != nil {
		p.Temperature = *opts.Temperature
	}
	if opts.Model != "" {
		// The model a tool switched to is a wish: the client's model
		// preferences carry it as a hint.
		p.ModelPreferences = &sdk.ModelPreferences{Hints: []*sdk.ModelHint{{Name: opts.Model}}}
	}
	res, err := m.create(ctx, p)
	if err != nil {
		return "", fmt.Errorf("asking the model of the MCP client %s (sampling): %w", m.client, err)
	}
	switch c := res.Content.(type) {
	case *sdk.TextContent:
		return c.Text, nil
	case nil:
		return "", errors.New("the MCP client's model gave no answer")
	default:
		return "", fmt.Errorf("the MCP client's model answered with a %T block, not text", c)
	}
}

// absentModel is the model of a client of the 2026-07-28 revision that
// declares no sampling: asking it fails the call, and a call that fails
// after asking it is answered with MissingRequiredClientCapability
// (-32021), as the revision requires of a server that needed a capability
// the client did not declare.
type absentModel struct{ c *serverCall }

func (m *absentModel) GenerateJSON(context.Context, string, json.RawMessage) (string, error) {
	m.c.noSampling.Store(true)
	return "", tool.ErrNoModel
}

// missingCapability is the error that answers a call that failed for
// want of the client's model, nil otherwise.
func (c *serverCall) missingCapability(res *tool.Result, err error) error {
	if !c.noSampling.Load() || (err == nil && res != nil && res.Success) {
		return nil
	}
	data, _ := json.Marshal(sdk.MissingRequiredClientCapabilityData{
		RequiredCapabilities: &sdk.ClientCapabilities{Sampling: &sdk.SamplingCapabilities{}}})
	return &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Data: data,
		Message: fmt.Sprintf("tool %s needs the client's model (sampling), which the client did not declare in its capabilities", c.name)}
}

// offersSampling reports whether a client declares sampling.
func offersSampling(caps *sdk.ClientCapabilities) bool { return caps != nil && caps.Sampling != nil }
