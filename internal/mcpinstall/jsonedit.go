package mcpinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrNotJSON is wrapped by the errors of SetMember for a file that is not
// one JSON object (JSON with comments included): nothing is changed.
var ErrNotJSON = errors.New("not a JSON object")

var bom = []byte("\xef\xbb\xbf")

// span is a byte range of a document.
type span struct{ start, end int }

// member is a member of a JSON object: the spans of its key (quotes
// included) and of its value.
type member struct {
	key        string
	keySpan    span
	valueSpan  span
	valueFirst byte
}

// object is a JSON object of a document: where its braces are and its
// members in order.
type object struct {
	open, close int // offsets of '{' and '}'
	members     []member
}

// readObject reads the object whose '{' is at data[open].
func readObject(data []byte, open int) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data[open:]))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: expected an object at offset %d", ErrNotJSON, open)
	}
	obj := &object{open: open}
	for dec.More() {
		keyStart := open + skipSpace(data[open:], int(dec.InputOffset()))
		if keyStart < len(data) && data[keyStart] == ',' {
			keyStart = open + skipSpace(data[open:], keyStart-open+1)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("%w: a key is not a string", ErrNotJSON)
		}
		keyEnd := open + int(dec.InputOffset())
		// The value starts after the colon.
		vs := skipSpace(data[open:], keyEnd-open)
		if open+vs >= len(data) || data[open+vs] != ':' {
			return nil, fmt.Errorf("%w: expected ':' after key %q", ErrNotJSON, key)
		}
		vs = skipSpace(data[open:], vs+1)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
		}
		ve := open + int(dec.InputOffset())
		obj.members = append(obj.members, member{key: key, keySpan: span{keyStart, keyEnd}, valueSpan: span{open + vs, ve}, valueFirst: data[open+vs]})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, fmt.Errorf("%w: unterminated object", ErrNotJSON)
	}
	obj.close = open + int(dec.InputOffset()) - 1
	return obj, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// find returns the last member named key (the one JSON decoders keep),
// nil when there is none.
func (o *object) find(key string) *member {
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			return &o.members[i]
		}
	}
	return nil
}

// SetMember returns doc with doc[container][name] set to value (any JSON
// value), changing nothing else: the other members, their order, the
// file's formatting and its indentation stay as they were, and the new
// text is indented like the file. A missing container is added at the
// end of the top-level object; an empty or blank doc is a new object.
// replaced reports whether doc[container][name] was there before.
//
// doc must be one JSON object (after an optional byte-order mark),
// without comments (JSONC) or trailing commas; anything else is an error wrapping ErrNotJSON. A container that
// is not an object is an error too.
func SetMember(doc []byte, container, name string, value json.RawMessage) (out []byte, replaced bool, err error) {
	// A byte-order mark (Windows editors write one) is kept as it was.
	if rest, ok := bytes.CutPrefix(doc, bom); ok {
		out, replaced, err = SetMember(rest, container, name, value)
		if err != nil {
			return nil, false, err
		}
		return append(append([]byte{}, bom...), out...), replaced, nil
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}\n")
	}
	if !json.Valid(doc) {
		return nil, false, fmt.Errorf("%w: %v", ErrNotJSON, syntaxError(doc))
	}
	rootOpen := skipSpace(doc, 0)
	if doc[rootOpen] != '{' {
		return nil, false, fmt.Errorf("%w: the top level is not an object", ErrNotJSON)
	}
	root, err := readObject(doc, rootOpen)
	if err != nil {
		return nil, false, err
	}
	unit, newline := indentUnit(doc), lineEnding(doc)
	filePretty := bytes.Count(doc, []byte("\n")) > 1 || len(root.members) == 0
	c := root.find(container)
	if c == nil {
		// Add the container, holding the one entry.
		pretty := filePretty
		inner := indentOf(doc, root, unit)
		k, _ := json.Marshal(name)
		obj := "{" + string(k) + ":" + string(value) + "}"
		return insertMember(doc, root, container, render(json.RawMessage(obj), pretty, inner, unit, newline), inner, newline, pretty), false, nil
	}
	if c.valueFirst != '{' {
		return nil, false, fmt.Errorf("%q is not an object: lcp will not replace it", container)
	}
	obj, err := readObject(doc, c.valueSpan.start)
	if err != nil {
		return nil, false, err
	}
	pretty := bytes.ContainsAny(doc[obj.open:obj.close], "\n") || (len(obj.members) == 0 && filePretty)
	inner := indentOf(doc, obj, unit)
	if e := obj.find(name); e != nil {
		return splice(doc, e.valueSpan.start, e.valueSpan.end, render(value, pretty, inner, unit, newline)), true, nil
	}
	return insertMember(doc, obj, name, render(value, pretty, inner, unit, newline), inner, newline, pretty), false, nil
}

// insertMember inserts "key": value (rendered) as the last member of obj:
// on a line of its own at indentation inner when pretty, else inline.
func insertMember(doc []byte, obj *object, key, value, inner, newline string, pretty bool) []byte {
	k, _ := json.Marshal(key)
	member := string(k) + ": " + value
	if !pretty {
		member = string(k) + ":" + value
	}
	if len(obj.members) == 0 {
		if !pretty {
			return splice(doc, obj.open+1, obj.close, member)
		}
		return splice(doc, obj.open+1, obj.close, newline+inner+member+newline+leading(doc, obj.open))
	}
	end := obj.members[len(obj.members)-1].valueSpan.end
	if !pretty {
		return splice(doc, end, end, ","+member)
	}
	return splice(doc, end, end, ","+newline+inner+member)
}

func splice(doc []byte, start, end int, text string) []byte {
	out := make([]byte, 0, len(doc)+len(text))
	out = append(out, doc[:start]...)
	out = append(out, text...)
	return append(out, doc[end:]...)
}

// indentOf is the indentation of obj's members: that of its first member
// when it is on a line of its own, else one unit more than the line of
// obj's brace.
func indentOf(doc []byte, obj *object, unit string) string {
	if len(obj.members) > 0 {
		if ind, ok := lineIndent(doc, obj.members[0].keySpan.start); ok {
			return ind
		}
	}
	return leading(doc, obj.open) + unit
}

// lineIndent returns the whitespace before offset i on its line, and
// whether only whitespace precedes i there.
func lineIndent(doc []byte, i int) (string, bool) {
	start := bytes.LastIndexByte(doc[:i], '\n') + 1
	pre := doc[start:i]
	if len(bytes.TrimLeft(pre, " \t")) != 0 {
		return string(pre[:len(pre)-len(bytes.TrimLeft(pre, " \t"))]), false
	}
	return string(pre), true
}

// leading is the indentation of the line holding offset i.
func leading(doc []byte, i int) string {
	start := bytes.LastIndexByte(doc[:i], '\n') + 1
	line := doc[start:i]
	return string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
}

// indentUnit guesses the file's indentation step from its first indented
// line: a tab, or that line's spaces; two spaces when nothing is indented.
func indentUnit(doc []byte) string {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		trimmed := bytes.TrimLeft(line, " \t")
		if n := len(line) - len(trimmed); n > 0 && len(trimmed) > 0 {
			if line[0] == '\t' {
				return "\t"
			}
			return strings.Repeat(" ", n)
		}
	}
	return "  "
}

func lineEnding(doc []byte) string {
	if bytes.Contains(doc, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// render writes value as JSON: indented when pretty (its first line
// continues the current line, the others start at indent), else compact.
func render(value json.RawMessage, pretty bool, indent, unit, newline string) string {
	var b bytes.Buffer
	if !pretty {
		if err := json.Compact(&b, value); err != nil {
			return string(value)
		}
		return b.String()
	}
	if err := json.Indent(&b, value, indent, unit); err != nil {
		return string(value)
	}
	out := b.String()
	if newline != "\n" {
		out = strings.ReplaceAll(out, "\n", newline)
	}
	return out
}

// syntaxError says where doc stops being JSON.
func syntaxError(doc []byte) error {
	var v any
	err := json.Unmarshal(doc, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := bytes.Count(doc[:min(int(se.Offset), len(doc))], []byte("\n")) + 1
		return fmt.Errorf("line %d: %v (comments and trailing commas are not JSON)", line, se)
	}
	if err == nil {
		return errors.New("invalid JSON")
	}
	return err
}
