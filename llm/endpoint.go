package llm

import (
	"fmt"
	"net/url"
	"strings"
)

// ParseEndpoint reads an endpoint in the syntax of lcp's --model flag,
// BASE_URL[#MODEL]:
//
//	http://localhost:8080/v1                  llama.cpp, the served model
//	http://localhost:11434/v1#qwen2.5:7b      Ollama, model qwen2.5:7b
//	https://api.openai.com/v1#gpt-4o-mini     OpenAI
//
// The fragment after the first '#' names the model (empty when absent).
// A URL with no path gets /v1, the usual base of OpenAI-compatible
// servers; a trailing /chat/completions (or /images/generations,
// /audio/speech, /audio/transcriptions) is removed, so that the full
// endpoint URL works too. Only http and https URLs with a host are
// accepted. The base never ends with a slash.
func ParseEndpoint(s string) (base, model string, err error) {
	s = strings.TrimSpace(s)
	raw, model, _ := strings.Cut(s, "#")
	u, perr := url.Parse(raw)
	if perr != nil || raw == "" {
		return "", "", fmt.Errorf("llm: endpoint %q is not a URL (want http://host:port/v1#model)", redactURL(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", fmt.Errorf("llm: endpoint %q must start with http:// or https:// (want http://host:port/v1#model)", redactURL(raw))
	}
	if u.Host == "" {
		return "", "", fmt.Errorf("llm: endpoint %q has no host", redactURL(raw))
	}
	p := strings.TrimRight(u.Path, "/")
	for _, full := range []string{"/chat/completions", "/images/generations", "/audio/speech", "/audio/transcriptions"} {
		p = strings.TrimSuffix(p, full)
	}
	if p == "" {
		p = "/v1"
	}
	u.Path, u.RawPath = p, ""
	return u.String(), strings.TrimSpace(model), nil
}

// Environment variables read by APIKeyFromEnv, in order.
const (
	EnvAPIKey       = "LCP_API_KEY"
	EnvOpenAIAPIKey = "OPENAI_API_KEY"
)

// APIKeyFromEnv returns the API key from LCP_API_KEY, else OPENAI_API_KEY,
// else "". getenv is os.Getenv or a test's stand-in.
func APIKeyFromEnv(getenv func(string) string) string {
	for _, k := range []string{EnvAPIKey, EnvOpenAIAPIKey} {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
	}
	return ""
}
