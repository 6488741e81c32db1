package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON schema, used to validate tool arguments,
// structured output and form answers. Schemas may come from untrusted
// peers (MCP servers), so a schema can never make lcp load a file or URL:
// every external $ref is refused.
type Schema struct {
	s    *jsonschema.Schema
	fast *fastSchema // nil when the schema is outside the fast subset
}

// refuseLoader refuses every URL a schema refers to.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema refers to %s: external references are not allowed", url)
}

// printer words the validator's messages; made at the first violation.
var printer = sync.OnceValue(func() *message.Printer { return message.NewPrinter(language.English) })

// CompileSchema compiles a JSON schema document.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	const loc = "lcp:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return &Schema{s: s, fast: compileFast(raw)}, nil
}

// ValidateJSON checks a JSON document against the schema and returns every
// violation, nil when valid; invalid JSON is one violation at the root.
// Common schemas (typed properties, required names, bounds) are checked
// on the text directly; the rest, and every invalid value, go through the
// full validator.
func (s *Schema) ValidateJSON(raw []byte) []Violation {
	if !json.Valid(raw) {
		return []Violation{{Message: ErrNotJSON.Error()}}
	}
	return s.ValidateValidJSON(raw)
}

// ErrNotJSON is the message of the one violation ValidateJSON reports for
// text that is not JSON.
var ErrNotJSON = errors.New("not valid JSON")

// ValidateValidJSON is ValidateJSON for text known to be valid JSON (what
// json.Marshal produced, or what json.Valid accepted): it skips that check.
func (s *Schema) ValidateValidJSON(raw []byte) []Violation {
	if s.fast != nil && s.fast.valid(bytes.TrimSpace(raw)) {
		return nil
	}
	v, err := DecodeJSON(raw)
	if err != nil {
		return []Violation{{Message: err.Error()}}
	}
	return s.Validate(v)
}

// DecodeJSON decodes a JSON document into the generic form Validate takes
// (numbers as json.Number, so big integers stay exact).
func DecodeJSON(raw []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// Validate checks a decoded value (as DecodeJSON gives) against the schema
// and returns every violation at the leaves, sorted by pointer; nil means
// valid.
func (s *Schema) Validate(v any) []Violation {
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Message: err.Error()}}
	}
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{Pointer: pointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(printer())})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

// pointer renders an instance location as a JSON pointer (RFC 6901).
func pointer(loc []string) string {
	var b strings.Builder
	for _, p := range loc {
		b.WriteByte('/')
		p = strings.ReplaceAll(p, "~", "~0")
		b.WriteString(strings.ReplaceAll(p, "/", "~1"))
	}
	return b.String()
}

func validateForm(r *Request, obj map[string]any) error {
	s, err := CompileSchema(r.Schema)
	if err != nil {
		return &InvalidInteractionError{ID: r.ID, Message: err.Error()}
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return &InvalidInteractionError{ID: r.ID, Message: err.Error()}
	}
	v, _ := DecodeJSON(raw)
	if vs := s.Validate(v); len(vs) > 0 {
		msgs := make([]string, len(vs))
		for i, x := range vs {
			msgs[i] = x.Pointer + ": " + x.Message
		}
		return &InvalidInteractionError{ID: r.ID, Message: "the form answer does not match its schema: " + strings.Join(msgs, "; ")}
	}
	return nil
}
