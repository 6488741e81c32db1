package tool

import (
	"context"
	"encoding/json"
	"errors"
)

// Generator is a language model a call may ask for text: the host's
// configured model (an *llm.Client), or the model of the MCP client that
// called the tool, through sampling (lcp mcp puts one in each call of a
// client that offers it). Python tools reach it as
// lollms_client_instance.generate_text, native tools with Generate.
type Generator interface {
	// GenerateJSON completes prompt; options is a JSON object of
	// generate_text's keyword arguments (n_predict, temperature,
	// system_prompt...), nil or empty for none.
	GenerateJSON(ctx context.Context, prompt string, options json.RawMessage) (string, error)
}

// ErrNoModel is returned by Generate in a call that has no language
// model.
var ErrNoModel = errors.New("no language model is available to this call: the host configures none, and its caller offers no sampling")

// Generate asks the language model of the call ctx belongs to
// (CallRequest.Generator) to complete prompt; options is a JSON object of
// generate_text's keyword arguments (n_predict, temperature,
// system_prompt...), nil for none. Without a model — outside a call, or
// in a call that has none — it returns ErrNoModel.
func Generate(ctx context.Context, prompt string, options json.RawMessage) (string, error) {
	c := CallFromContext(ctx)
	if c == nil || c.Generator == nil {
		return "", ErrNoModel
	}
	return c.Generator.GenerateJSON(ctx, prompt, options)
}
