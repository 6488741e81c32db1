package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
)

// GenerateOptions adjusts a plain text generation. The zero value uses the
// server's defaults.
type GenerateOptions struct {
	// Model names the model; empty means the Client's Model (a Router
	// reads it as the alias of one of its profiles).
	Model string
	// System is an optional system prompt.
	System string
	// MaxTokens bounds the answer (lollms' n_predict); zero or less means
	// the server's default.
	MaxTokens int
	// Temperature, TopP and Seed are sent when set.
	Temperature *float64
	TopP        *float64
	Seed        *int64
	// Stop ends the answer at any of these strings.
	Stop []string
	// TopK and RepeatPenalty are sent as "top_k" and "repeat_penalty",
	// which llama.cpp-style servers read and others ignore.
	TopK          *int
	RepeatPenalty *float64
}

// Generate returns the model's text answer to prompt, sent as one user
// message (after the System prompt, if any), without tools. It is what a
// Python tool's lollms_client_instance.generate_text(prompt, n_predict=...)
// runs. opts may be nil.
func (c *Client) Generate(ctx context.Context, prompt string, opts *GenerateOptions) (string, error) {
	if opts == nil {
		opts = &GenerateOptions{}
	}
	req := &ChatRequest{
		Model:     opts.Model,
		MaxTokens: max(opts.MaxTokens, 0), Temperature: opts.Temperature, TopP: opts.TopP,
		Seed: opts.Seed, Stop: opts.Stop,
	}
	if opts.System != "" {
		req.Messages = append(req.Messages, System(opts.System))
	}
	req.Messages = append(req.Messages, User(prompt))
	if opts.TopK != nil || opts.RepeatPenalty != nil {
		req.Extra = map[string]json.RawMessage{}
		if opts.TopK != nil {
			req.Extra["top_k"], _ = json.Marshal(*opts.TopK)
		}
		if opts.RepeatPenalty != nil {
			req.Extra["repeat_penalty"], _ = json.Marshal(*opts.RepeatPenalty)
		}
	}
	resp, err := c.Chat(ctx, req)
	if err != nil {
		return "", err
	}
	return resp.Message().Content, nil
}

// GenerateJSON is Generate with the options given as the JSON object of
// generate_text's keyword arguments (ParseGenerateOptions): the form in
// which a Python tool's request reaches the host.
func (c *Client) GenerateJSON(ctx context.Context, prompt string, options json.RawMessage) (string, error) {
	opts, err := ParseGenerateOptions(options)
	if err != nil {
		return "", err
	}
	return c.Generate(ctx, prompt, opts)
}

// ParseGenerateOptions reads the keyword arguments of lollms'
// generate_text as a JSON object: n_predict (also max_tokens,
// max_new_tokens), temperature, top_p, top_k, repeat_penalty, seed, stop
// (also stop_sequences; a string or a list of strings), system_prompt
// (also system) and model (the name switch_model chose). Null values and
// other keys (streaming_callback, n_threads, images...) are ignored; a
// value of the wrong type is an error. Empty input or null means no
// options.
func ParseGenerateOptions(raw json.RawMessage) (*GenerateOptions, error) {
	opts := &GenerateOptions{}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return opts, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("llm: generation options are not a JSON object: %w", err)
	}
	get := func(keys ...string) (string, json.RawMessage) {
		for _, k := range keys {
			if v, ok := m[k]; ok && string(bytes.TrimSpace(v)) != "null" {
				return k, v
			}
		}
		return "", nil
	}
	if k, v := get("n_predict", "max_tokens", "max_new_tokens"); v != nil {
		n, err := intOption(k, v)
		if err != nil {
			return nil, err
		}
		opts.MaxTokens = int(max(n, 0))
	}
	for _, f := range []struct {
		dst  **float64
		keys []string
	}{
		{&opts.Temperature, []string{"temperature"}},
		{&opts.TopP, []string{"top_p"}},
		{&opts.RepeatPenalty, []string{"repeat_penalty"}},
	} {
		if k, v := get(f.keys...); v != nil {
			x, err := floatOption(k, v)
			if err != nil {
				return nil, err
			}
			*f.dst = &x
		}
	}
	if k, v := get("top_k"); v != nil {
		n, err := intOption(k, v)
		if err != nil {
			return nil, err
		}
		i := int(n)
		opts.TopK = &i
	}
	if k, v := get("seed"); v != nil {
		n, err := intOption(k, v)
		if err != nil {
			return nil, err
		}
		opts.Seed = &n
	}
	if k, v := get("stop", "stop_sequences"); v != nil {
		var one string
		if json.Unmarshal(v, &one) == nil {
			opts.Stop = []string{one}
		} else if err := json.Unmarshal(v, &opts.Stop); err != nil {
			return nil, fmt.Errorf("llm: generation option %s must be a string or a list of strings", k)
		}
	}
	if k, v := get("model"); v != nil {
		if err := json.Unmarshal(v, &opts.Model); err != nil {
			return nil, fmt.Errorf("llm: generation option %s must be a string", k)
		}
	}
	if k, v := get("system_prompt", "system"); v != nil {
		if err := json.Unmarshal(v, &opts.System); err != nil {
			return nil, fmt.Errorf("llm: generation option %s must be a string", k)
		}
	}
	return opts, nil
}

// intOption reads an integral JSON number (5 or 5.0).
func intOption(key string, v json.RawMessage) (int64, error) {
	f, err := floatOption(key, v)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("llm: generation option %s must be an integer", key)
	}
	return int64(f), nil
}

// floatOption reads a JSON number.
func floatOption(key string, v json.RawMessage) (float64, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, fmt.Errorf("llm: generation option %s must be a number", key)
	}
	return f, nil
}
