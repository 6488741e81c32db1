package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Schema is a compiled JSON schema, used to validate tool arguments,
// structured output and form answers. Schemas may come from untrusted
// peers (MCP servers), so a schema can never make lcp load a file or URL:
// every external $ref is refused.
type Schema struct {
	v    *validator
	fast *fastSchema // nil when the schema is outside the fast subset
}

// CompileSchema compiles a JSON schema document (draft 2020-12, or draft-07
// when its $schema says so).
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	v, err := newValidator(doc)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return &Schema{v: v, fast: compileFast(raw)}, nil
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

// DecodeJSON decodes one JSON document into the generic form Validate
// takes (numbers as json.Number, so big integers stay exact).
func DecodeJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("invalid character after the top-level value")
	}
	return v, nil
}

// Validate checks a decoded value (as DecodeJSON gives) against the schema
// and returns every violation at the leaves, sorted by pointer; nil means
// valid.
func (s *Schema) Validate(v any) []Violation {
	var out []Violation
	s.v.validate(s.v.root, v, "", 0, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
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
