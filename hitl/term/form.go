package term

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lcptools/lcp/tool"
)

// field is one property of a form's schema, as the terminal asks it.
type field struct {
	name     string
	title    string
	desc     string
	typ      string // the JSON type: string, integer, number, boolean, or "" (any JSON)
	enum     []any
	def      any
	hidden   bool // format password or writeOnly: read with echo off
	required bool
}

// formFields lists the top-level properties of an object schema in the
// order the schema names them.
func formFields(schema json.RawMessage) ([]field, error) {
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("form schema: %w", err)
	}
	if len(top.Properties) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("form schema: properties must be an object")
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("form schema: %w", err)
		}
		name, _ := tok.(string)
		var p struct {
			Type        any    `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			Default     any    `json:"default"`
			Format      string `json:"format"`
			WriteOnly   bool   `json:"writeOnly"`
		}
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("form schema: property %q: %w", name, err)
		}
		f := field{name: name, title: p.Title, desc: p.Description, enum: p.Enum, def: p.Default,
			hidden: p.Format == "password" || p.WriteOnly, required: slices.Contains(top.Required, name)}
		switch ty := p.Type.(type) {
		case string:
			f.typ = ty
		case []any: // ["string", "null"]: the first type that is not null
			for _, x := range ty {
				if s, _ := x.(string); s != "" && s != "null" {
					f.typ = s
					break
				}
			}
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// form asks for each property of the form's schema in turn. Enter skips
// an optional field; a required one is asked again.
func (t *Terminal) form(ctx context.Context, r *tool.Request) (tool.Response, error) {
	t.questionHeader(r, "Form")
	fields, err := formFields(r.Schema)
	if err != nil {
		return tool.Response{}, err
	}
	obj := map[string]any{}
	for _, f := range fields {
		v, ok, err := t.field(ctx, f)
		if err != nil {
			if ctx.Err() != nil || !isCancel(err) {
				return tool.Response{}, err
			}
			return r.Declined(QuestionCancelled), nil
		}
		if ok {
			obj[f.name] = v
		}
	}
	return r.Submitted(obj), nil
}

// field asks one field; ok is false for an optional field left empty.
func (t *Terminal) field(ctx context.Context, f field) (any, bool, error) {
	label := f.title
	if label == "" {
		label = f.name
	}
	label = clean(label, false)
	if f.required {
		label += " (required)"
	}
	if f.desc != "" {
		t.printf("%s — %s\n", label, clean(f.desc, false))
	} else {
		t.printf("%s\n", label)
	}
	if len(f.enum) > 0 {
		opts := make([]string, len(f.enum))
		def := -1
		for i, e := range f.enum {
			opts[i] = fmt.Sprint(e)
			if f.def != nil && fmt.Sprint(f.def) == opts[i] {
				def = i
			}
		}
		i, err := t.pick(ctx, opts, def)
		if err != nil {
			return nil, false, err
		}
		return f.enum[i], true, nil
	}
	for {
		switch {
		case f.typ == "boolean":
			t.write("[y/n]: ")
		case f.def != nil && !f.hidden:
			t.printf("(Enter for the default: %s) > ", clean(fmt.Sprint(f.def), false))
		default:
			t.write("> ")
		}
		line, err := t.readLine(ctx, !f.hidden)
		if err != nil {
			return nil, false, err
		}
		if !f.hidden {
			line = strings.TrimSpace(line)
		}
		if line == "" {
			if !f.required {
				return nil, false, nil
			}
			t.write("This field is required.\n")
			continue
		}
		if v, ok := parseField(f.typ, line); ok {
			return v, true, nil
		}
		t.printf("Not a valid %s.\n", f.typ)
	}
}

// jsonNumber reports whether s is exactly one JSON number.
func jsonNumber(s string) (json.Number, bool) {
	s = strings.TrimSpace(s)
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.InputOffset() != int64(len(s)) {
		return "", false
	}
	n, ok := v.(json.Number)
	return n, ok
}

// parseField reads a typed answer: numbers stay exact as json.Number.
func parseField(typ, s string) (any, bool) {
	switch typ {
	case "string":
		return s, true
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, true
		case "n", "no", "false":
			return false, true
		}
		return nil, false
	case "integer", "number":
		n, ok := jsonNumber(s)
		if !ok || (typ == "integer" && strings.ContainsAny(n.String(), ".eE")) {
			return nil, false
		}
		return n, true
	}
	// Any other type: a JSON value, or the text itself as a string.
	var v any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v, true
	}
	return s, true
}
