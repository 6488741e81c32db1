package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"
)

// Endpoint is an OpenAI-compatible endpoint of every modality: text
// (GenerateJSON), images, speech and transcription, with the models and
// voices it offers. *Client and *Router are ones.
type Endpoint interface {
	GenerateJSON(ctx context.Context, prompt string, options json.RawMessage) (string, error)
	GenerateImage(ctx context.Context, r *ImageRequest) (*Image, error)
	GenerateSpeech(ctx context.Context, r *SpeechRequest) (*Audio, error)
	Transcribe(ctx context.Context, r *TranscriptionRequest) (*Transcription, error)
	Models(ctx context.Context) ([]string, error)
	Voices(ctx context.Context) ([]string, error)
}

var (
	_ Endpoint = (*Client)(nil)
	_ Endpoint = (*Router)(nil)
)

// Profile is one endpoint of a modality, under the alias a tool switches
// to (lollms_client_instance.switch_model, switch_tti, switch_tts,
// switch_stt).
type Profile struct {
	Alias  string
	Client *Client
}

// Router serves one modality from several profiles. A request goes to the
// profile whose alias is the request's model name (what a tool switched
// to), else to the first profile with that name as its model; a request
// without a model goes to the first profile. Models lists the aliases.
type Router struct {
	Profiles []Profile
}

// Route returns the endpoint of profiles: nil for none, the Client of a
// single one, else a Router.
func Route(profiles []Profile) Endpoint {
	switch len(profiles) {
	case 0:
		return nil
	case 1:
		return profiles[0].Client
	}
	return &Router{Profiles: profiles}
}

// pick returns the client for a model name and the model to ask it for.
func (r *Router) pick(name string) (*Client, string, error) {
	if len(r.Profiles) == 0 {
		return nil, "", errors.New("llm: the router has no profiles")
	}
	if name != "" {
		for _, p := range r.Profiles {
			if p.Alias == name {
				return p.Client, "", nil
			}
		}
	}
	return r.Profiles[0].Client, name, nil
}

// GenerateJSON is Client.GenerateJSON on the profile its "model" option
// names.
func (r *Router) GenerateJSON(ctx context.Context, prompt string, options json.RawMessage) (string, error) {
	opts, err := ParseGenerateOptions(options)
	if err != nil {
		return "", err
	}
	c, model, err := r.pick(opts.Model)
	if err != nil {
		return "", err
	}
	opts.Model = model
	return c.Generate(ctx, prompt, opts)
}

// EditImage is Client.EditImage on the profile the request's Model
// names.
func (r *Router) EditImage(ctx context.Context, req *ImageEditRequest) (*Image, error) {
	c, model, err := r.pick(req.Model)
	if err != nil {
		return nil, err
	}
	cp := *req
	cp.Model = model
	return c.EditImage(ctx, &cp)
}

// GenerateImage is Client.GenerateImage on the profile the request's
// Model names.
func (r *Router) GenerateImage(ctx context.Context, req *ImageRequest) (*Image, error) {
	c, model, err := r.pick(req.Model)
	if err != nil {
		return nil, err
	}
	cp := *req
	cp.Model = model
	return c.GenerateImage(ctx, &cp)
}

// GenerateSpeech is Client.GenerateSpeech on the profile the request's
// Model names.
func (r *Router) GenerateSpeech(ctx context.Context, req *SpeechRequest) (*Audio, error) {
	c, model, err := r.pick(req.Model)
	if err != nil {
		return nil, err
	}
	cp := *req
	cp.Model = model
	return c.GenerateSpeech(ctx, &cp)
}

// Transcribe is Client.Transcribe on the profile the request's Model
// names.
func (r *Router) Transcribe(ctx context.Context, req *TranscriptionRequest) (*Transcription, error) {
	c, model, err := r.pick(req.Model)
	if err != nil {
		return nil, err
	}
	cp := *req
	cp.Model = model
	return c.Transcribe(ctx, &cp)
}

// Models lists the aliases of the profiles: the names a tool switches to.
func (r *Router) Models(context.Context) ([]string, error) {
	out := make([]string, 0, len(r.Profiles))
	for _, p := range r.Profiles {
		if p.Alias != "" {
			out = append(out, p.Alias)
		}
	}
	return out, nil
}

// Voices lists the voices of the first profile.
func (r *Router) Voices(ctx context.Context) ([]string, error) {
	c, _, err := r.pick("")
	if err != nil {
		return nil, err
	}
	return c.Voices(ctx)
}

// Modalities are the profiles of each modality: the language model (LLM),
// image generation (TTI), speech (TTS) and transcription (STT). It is what
// lcp's --model-config file holds.
type Modalities struct {
	LLM, TTI, TTS, STT []Profile
}

// profileEntry is a profile as a configuration file writes it.
type profileEntry struct {
	// Alias is the name tools switch to; by default the model's name.
	Alias string `json:"alias"`
	// URL is BASE_URL[#MODEL], as ParseEndpoint reads it; Model, when
	// set, replaces the fragment.
	URL   string `json:"url"`
	Model string `json:"model"`
	// APIKeyEnv names the environment variable of the key; by default
	// LCP_API_KEY, else OPENAI_API_KEY (keys are not written in files).
	APIKeyEnv string `json:"api_key_env"`
	// Voice is the default voice of a speech profile.
	Voice string `json:"voice"`
	// Timeout bounds each request, in seconds (DefaultTimeout when
	// absent).
	Timeout *float64 `json:"timeout"`
}

// LoadModalities reads a file of profiles (see ParseModalities).
func LoadModalities(path string, getenv func(string) string) (*Modalities, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llm: model config: %w", err)
	}
	m, err := ParseModalities(data, getenv)
	if err != nil {
		return nil, fmt.Errorf("llm: model config %s: %w", path, err)
	}
	return m, nil
}

// ParseModalities reads profiles of the modalities "llm", "tti", "tts"
// and "stt", each a profile object or a list of them:
//
//	{"llm": {"url": "http://localhost:8080/v1#qwen2.5"},
//	 "tti": [{"alias": "sdxl", "url": "http://localhost:7860/v1#sdxl"},
//	         {"alias": "dalle", "url": "https://api.openai.com/v1#dall-e-3", "api_key_env": "OPENAI_API_KEY"}],
//	 "tts": {"url": "http://localhost:8880/v1#kokoro", "voice": "af_sky", "timeout": 60},
//	 "stt": {"url": "http://localhost:8000/v1#whisper-1"}}
//
// A profile's alias defaults to its model's name; aliases are unique per
// modality. getenv reads the keys (os.Getenv or a test's stand-in).
func ParseModalities(data []byte, getenv func(string) string) (*Modalities, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return nil, errors.New(`want a JSON object with "llm", "tti", "tts" and "stt" profiles`)
	}
	out := &Modalities{}
	for key, raw := range top {
		var dst *[]Profile
		switch key {
		case "llm":
			dst = &out.LLM
		case "tti":
			dst = &out.TTI
		case "tts":
			dst = &out.TTS
		case "stt":
			dst = &out.STT
		default:
			return nil, fmt.Errorf("unknown modality %q (want llm, tti, tts or stt)", key)
		}
		var entries []json.RawMessage
		raw = bytes.TrimSpace(raw)
		switch {
		case len(raw) > 0 && raw[0] == '[':
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
		case string(raw) == "null":
		default:
			entries = []json.RawMessage{raw}
		}
		seen := map[string]bool{}
		for i, e := range entries {
			p, err := parseProfile(e, getenv)
			if err != nil {
				return nil, fmt.Errorf("%s profile %d: %w", key, i+1, err)
			}
			if p.Alias != "" && seen[p.Alias] {
				return nil, fmt.Errorf("%s profile %d: the alias %q is used twice", key, i+1, p.Alias)
			}
			seen[p.Alias] = true
			*dst = append(*dst, p)
		}
	}
	return out, nil
}

func parseProfile(raw json.RawMessage, getenv func(string) string) (Profile, error) {
	var e profileEntry
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Profile{}, err
	}
	if e.URL == "" {
		return Profile{}, errors.New(`a profile needs a "url"`)
	}
	c, err := NewProfileClient(e.URL, getenv)
	if err != nil {
		return Profile{}, err
	}
	if e.Model != "" {
		c.Model = e.Model
	}
	if e.APIKeyEnv != "" {
		c.APIKey = strings.TrimSpace(getenv(e.APIKeyEnv))
		if c.APIKey == "" {
			return Profile{}, fmt.Errorf("api_key_env: $%s is not set", e.APIKeyEnv)
		}
	}
	c.Voice = e.Voice
	if e.Timeout != nil {
		t := *e.Timeout
		if math.IsNaN(t) || t <= 0 || t > 24*3600 {
			return Profile{}, fmt.Errorf("timeout: %v seconds is out of range", t)
		}
		c.Timeout = time.Duration(t * float64(time.Second))
	}
	alias := e.Alias
	if alias == "" {
		alias = c.Model
	}
	return Profile{Alias: alias, Client: c}, nil
}

// NewProfileClient returns the client of an endpoint in the syntax of
// ParseEndpoint (BASE_URL[#MODEL]), with the key of APIKeyFromEnv.
func NewProfileClient(endpoint string, getenv func(string) string) (*Client, error) {
	base, model, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	return &Client{BaseURL: base, Model: model, APIKey: APIKeyFromEnv(getenv)}, nil
}
