package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/lcptools/lcp/internal/jsonindent"
	"github.com/lcptools/lcp/tool"
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

// writeSpecs writes the specs of infos in format f exactly as writeJSON
// writes a []json.RawMessage of them (an indented JSON array), streaming:
// each spec is made in one buffer and indented in one pass straight into
// a buffered writer, where encoding/json would validate, compact and
// indent the whole document in memory first — most of the time of lcp
// list --json on thousands of tools.
func writeSpecs(w io.Writer, infos []tool.Info, f tool.Format) error {
	var spec []byte
	return writeJSONArray(w, len(infos), func(i int) json.RawMessage {
		spec = infos[i].AppendSpec(spec[:0], f)
		return spec
	})
}

// writeJSONArray writes the n items that item returns as writeJSON
// writes a []json.RawMessage of n items, streaming them (see writeSpecs).
// An item that is not valid JSON is an error, as it is for writeJSON;
// the items before it are written by then.
func writeJSONArray(w io.Writer, n int, item func(i int) json.RawMessage) error {
	if n == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 8<<10)
	buf = append(buf, "[\n"...)
	for i := range n {
		buf = append(buf, "  "...)
		if it := item(i); it == nil {
			buf = append(buf, "null"...) // as json.Marshal writes a nil RawMessage
		} else {
			var err error
			if buf, err = jsonindent.Append(buf, it, "  ", 1); err != nil {
				return fmt.Errorf("json: item %d: %w", i, err)
			}
		}
		if i < n-1 {
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
