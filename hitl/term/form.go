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
	typ      string // the JSON type: string, integer, number, boolean, array, or "" (any JSON)
	options  []option
	multi    bool // an array of options: several may be chosen
	minItems int
	maxItems int // 0: no limit
	def      any
	hidden   bool // format password or writeOnly: read with echo off
	required bool
}

// option is one value a field may take, with the title people read.
type option struct {
	value any
	title string
}

// schemaProp is what the terminal reads of a property's schema (or of the
// items of an array property).
type schemaProp struct {
	Type        any           `json:"type"`
	Title       string        `json:"title"`
	Description string        `json:"description"`
	Enum        []any         `json:"enum"`
	EnumNames   []string      `json:"enumNames"`
	OneOf       []titledConst `json:"oneOf"`
	AnyOf       []titledConst `json:"anyOf"`
	Items       *schemaProp   `json:"items"`
	MinItems    int           `json:"minItems"`
	MaxItems    int           `json:"maxItems"`
	Default     any           `json:"default"`
	Format      string        `json:"format"`
	WriteOnly   bool          `json:"writeOnly"`
}

// titledConst is one choice of a titled enum (SEP-1330): {"const", "title"}.
type titledConst struct {
	Const *any   `json:"const"`
	Title string `json:"title"`
}

// typeOf returns the JSON type of a schema's "type": the first that is
// not null of a list (["string", "null"]).
func typeOf(t any) string {
	switch ty := t.(type) {
	case string:
		return ty
	case []any:
		for _, x := range ty {
			if s, _ := x.(string); s != "" && s != "null" {
				return s
			}
		}
	}
	return ""
}

// choices returns the options of a property: its enum (titled by
// enumNames, the legacy form), or the consts of its oneOf or anyOf
// (titled enums, SEP-1330).
func (p *schemaProp) choices() []option {
	var out []option
	if len(p.Enum) > 0 {
		for i, v := range p.Enum {
			o := option{value: v, title: fmt.Sprint(v)}
			if len(p.EnumNames) == len(p.Enum) && p.EnumNames[i] != "" {
				o.title = p.EnumNames[i]
			}
			out = append(out, o)
		}
		return out
	}
	for _, alts := range [][]titledConst{p.OneOf, p.AnyOf} {
		for _, a := range alts {
			if a.Const == nil {
				continue
			}
			o := option{value: *a.Const, title: a.Title}
			if o.title == "" {
				o.title = fmt.Sprint(*a.Const)
			}
			out = append(out, o)
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
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
		var p schemaProp
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("form schema: property %q: %w", name, err)
		}
		f := field{name: name, title: p.Title, desc: p.Description, def: p.Default, typ: typeOf(p.Type),
			hidden: p.Format == "password" || p.WriteOnly, required: slices.Contains(top.Required, name)}
		f.options = p.choices()
		if f.typ == "array" && p.Items != nil && len(f.options) == 0 {
			if f.options = p.Items.choices(); len(f.options) > 0 {
				f.multi, f.minItems, f.maxItems = true, p.MinItems, p.MaxItems
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
// Enter takes the default a field has, which the prompt shows.
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
	if f.multi {
		return t.fieldMany(ctx, f)
	}
	if len(f.options) > 0 {
		titles := make([]string, len(f.options))
		def := -1
		for i, o := range f.options {
			titles[i] = o.title
			if f.def != nil && fmt.Sprint(f.def) == fmt.Sprint(o.value) {
				def = i
			}
		}
		i, err := t.pick(ctx, titles, def)
		if err != nil {
			return nil, false, err
		}
		return f.options[i].value, true, nil
	}
	def, hasDef := "", f.def != nil && !f.hidden
	if hasDef {
		def = defaultText(f.def)
	}
	for {
		switch {
		case f.typ == "boolean" && hasDef:
			t.printf("[y/n] (Enter for the default: %s): ", yesNo(f.def))
		case f.typ == "boolean":
			t.write("[y/n]: ")
		case hasDef:
			t.printf("(Enter for the default: %s) > ", clean(def, false))
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
			if hasDef {
				return f.def, true, nil
			}
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

// fieldMany asks for several of a field's options (a multi-select,
// SEP-1330), within its minItems and maxItems.
func (t *Terminal) fieldMany(ctx context.Context, f field) (any, bool, error) {
	titles := make([]string, len(f.options))
	var chosen []int
	defs, _ := f.def.([]any)
	for i, o := range f.options {
		titles[i] = o.title
		for _, d := range defs {
			if fmt.Sprint(d) == fmt.Sprint(o.value) {
				chosen = append(chosen, i)
			}
		}
	}
	for {
		picked, err := t.pickMany(ctx, titles, chosen)
		if err != nil {
			return nil, false, err
		}
		switch {
		case len(picked) == 0 && !f.required && f.minItems == 0:
			return nil, false, nil
		case len(picked) < max(f.minItems, 1) && (f.required || f.minItems > 0):
			t.printf("Choose at least %d.\n", max(f.minItems, 1))
			continue
		case f.maxItems > 0 && len(picked) > f.maxItems:
			t.printf("Choose at most %d.\n", f.maxItems)
			continue
		}
		out := make([]any, len(picked))
		for i, p := range picked {
			out[i] = f.options[p].value
		}
		return out, true, nil
	}
}

// defaultText shows a default value: a string as itself, anything else
// as JSON.
func defaultText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func yesNo(v any) string {
	if b, ok := v.(bool); ok && b {
		return "yes"
	}
	return "no"
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
