package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/lcptools/lcp/internal/jsonindent"
)

// writeJSON writes v as indented JSON without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeJSONArray writes items exactly as writeJSON does (an indented
// JSON array), but streams them: each item is indented in one pass
// straight into a buffered writer, where encoding/json would validate,
// compact and indent the whole document in memory first — most of the
// time of lcp list --json on thousands of tools. An item that is not
// valid JSON is an error, as it is for writeJSON; the items before it are
// written by then.
func writeJSONArray(w io.Writer, items []json.RawMessage) error {
	if len(items) == 0 {
		empty := "[]\n"
		if items == nil {
			empty = "null\n" // as writeJSON writes a nil slice
		}
		_, err := io.WriteString(w, empty)
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 8<<10)
	buf = append(buf, "[\n"...)
	for i, item := range items {
		buf = append(buf, "  "...)
		if item == nil {
			buf = append(buf, "null"...) // as json.Marshal writes a nil RawMessage
		} else {
			var err error
			if buf, err = jsonindent.Append(buf, item, "  ", 1); err != nil {
				return fmt.Errorf("json: item %d: %w", i, err)
			}
		}
		if i < len(items)-1 {
			buf = append(buf, ",\n"...)
		} else {
			buf = append(buf, "\n]\n"...)
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
	}
	return bw.Flush()
}

// writeJSONLine writes v as one line of JSON.
func writeJSONLine(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// orderedKeys returns the keys of a JSON object in document order.
func orderedKeys(obj json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
