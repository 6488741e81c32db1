package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrResponseTooLarge is wrapped by the error of a response longer than
// Client.MaxResponseBytes.
var ErrResponseTooLarge = errors.New("response too large")

// ErrNoEndpoint is returned by a Client without a BaseURL.
var ErrNoEndpoint = errors.New("llm: no endpoint configured (BaseURL is empty)")

// HTTPError reports an answer with an HTTP status other than 200: a bad
// key (401), an unknown model (404), a context too long (400), an
// overloaded or broken server (429, 5xx).
type HTTPError struct {
	// Method and URL say which request failed; the URL never holds a
	// password.
	Method, URL string
	// StatusCode and Status are the HTTP status ("500 Internal Server
	// Error").
	StatusCode int
	Status     string
	// Message is the server's error message, from its JSON error object
	// when it sent one, else the start of the body.
	Message string
	// Type and Code are the error object's "type" and "code", when given.
	Type, Code string
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("llm: %s %s: %s", e.Method, e.URL, e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// ResponseError reports a response that is not a valid chat-completions
// answer: not JSON, no choices, a broken event stream.
type ResponseError struct {
	Reason string
}

func (e *ResponseError) Error() string { return "llm: malformed response: " + e.Reason }

// maxMessage bounds the server's error text kept in an error.
const maxMessage = 500

// errorMessage extracts the error text of an error body: the OpenAI
// {"error": {"message", "type", "code"}}, {"error": "text"}, {"message":
// "text"} or {"detail": ...}; anything else is the body's start as text.
func errorMessage(body []byte) (msg, typ, code string) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) == nil {
		if e, ok := obj["error"]; ok {
			var eo struct {
				Message string          `json:"message"`
				Type    string          `json:"type"`
				Code    json.RawMessage `json:"code"`
			}
			var es string
			switch {
			case json.Unmarshal(e, &es) == nil:
				return clip(es), "", ""
			case json.Unmarshal(e, &eo) == nil && eo.Message != "":
				return clip(eo.Message), clip(eo.Type), clip(scalar(eo.Code))
			}
		}
		for _, k := range []string{"message", "detail"} {
			if v, ok := obj[k]; ok {
				if s := scalar(v); s != "" {
					return clip(s), "", ""
				}
				return clip(string(v)), "", ""
			}
		}
	}
	return clip(string(body)), "", ""
}

// scalar returns a JSON string's value or a number's text; "" otherwise.
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// clip makes server text fit for a one-line error: valid UTF-8, control
// characters as spaces, runs of space collapsed, at most maxMessage bytes.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// redact replaces every occurrence of the key in s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
