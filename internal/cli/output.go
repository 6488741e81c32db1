package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"

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
// the specs are made and indented in one pass (see writeArray) straight
// into a buffered writer, where encoding/json would validate, compact and
// indent the whole document in memory first — most of the time of lcp
// list --json on thousands of tools.
func writeSpecs(w io.Writer, infos []tool.Info, f tool.Format) error {
	return writeArray(w, len(infos), func(dst []byte, i int) []byte { return infos[i].AppendSpec(dst, f) })
}

// writeJSONArray writes items as writeJSON writes them, streaming (see
// writeArray); a nil slice is "[]", not "null".
func writeJSONArray(w io.Writer, items []json.RawMessage) error {
	return writeArray(w, len(items), func(dst []byte, i int) []byte {
		if items[i] == nil {
			return append(dst, "null"...) // as json.Marshal writes a nil RawMessage
		}
		return append(dst, items[i]...)
	})
}

// arrayChunk is the number of items indented in one piece of work.
const arrayChunk = 128

// writeArray writes n items as writeJSON writes a []json.RawMessage of
// them: item(dst, i) appends the JSON of item i to dst, which is
// indented in one pass (package jsonindent) into a buffered writer. Long
// arrays are made in chunks on every CPU, written in order; item must
// then be safe for concurrent use. An item that is not valid JSON is an
// error, as it is for writeJSON; the items before it are written by then.
func writeArray(w io.Writer, n int, item func(dst []byte, i int) []byte) error {
	if n == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	// chunk appends items from..to (exclusive), each indented and followed
	// by its separator, to out (up to a bad item); scratch holds one item
	// at a time.
	chunk := func(from, to int, out, scratch []byte) ([]byte, []byte, error) {
		for i := from; i < to; i++ {
			scratch = item(scratch[:0], i)
			before := len(out)
			out = append(out, "  "...)
			var err error
			if out, err = jsonindent.Append(out, scratch, "  ", 1); err != nil {
				return out[:before], scratch, fmt.Errorf("json: item %d: %w", i, err)
			}
			if i < n-1 {
				out = append(out, ",\n"...)
			} else {
				out = append(out, "\n]\n"...)
			}
		}
		return out, scratch, nil
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.WriteString("[\n"); err != nil {
		return err
	}
	chunks := (n + arrayChunk - 1) / arrayChunk
	bounds := func(k int) (int, int) { return k * arrayChunk, min(n, (k+1)*arrayChunk) }
	if workers := min(runtime.GOMAXPROCS(0), chunks); workers > 1 {
		err := writeChunks(bw, chunks, workers, func(k int, out, scratch []byte) ([]byte, []byte, error) {
			from, to := bounds(k)
			return chunk(from, to, out, scratch)
		})
		return errors.Join(err, bw.Flush())
	}
	var out, scratch []byte
	for k := range chunks {
		from, to := bounds(k)
		var err error
		out, scratch, err = chunk(from, to, out[:0], scratch)
		if _, werr := bw.Write(out); werr != nil {
			return werr
		}
		if err != nil {
			return errors.Join(err, bw.Flush())
		}
	}
	return bw.Flush()
}

// writeChunks has workers goroutines build the chunks (the next not yet
// taken, each), and writes them to w in order; a chunk that failed is
// written up to where it failed. After an error, what is still being
// made is dropped.
func writeChunks(w io.Writer, chunks, workers int, build func(k int, out, scratch []byte) ([]byte, []byte, error)) error {
	type piece struct {
		b   []byte
		err error
	}
	done := make([]chan piece, chunks) // one each, buffered: a worker never waits
	for k := range done {
		done[k] = make(chan piece, 1)
	}
	free := make(chan []byte, 2*workers) // written buffers, for the next chunks
	var next, size atomic.Int64          // size: the length of the last chunk built
	var stop atomic.Bool
	for range workers {
		go func() {
			var scratch []byte
			for !stop.Load() {
				k := int(next.Add(1)) - 1
				if k >= chunks {
					return
				}
				var out []byte
				select {
				case out = <-free:
				default:
					// The workers run ahead of the writer, so most chunks
					// get a new buffer: sized like the last chunk (and a
					// little more) rather than grown from nothing, which
					// for lcp list --json on thousands of tools allocated
					// four times the output.
					out = make([]byte, 0, size.Load()*9/8)
				}
				var err error
				out, scratch, err = build(k, out[:0], scratch)
				size.Store(int64(len(out)))
				done[k] <- piece{out, err}
			}
		}()
	}
	defer stop.Store(true)
	for k := range chunks {
		p := <-done[k]
		if _, err := w.Write(p.b); err != nil {
			return err
		}
		if p.err != nil {
			return p.err
		}
		select {
		case free <- p.b:
		default:
		}
	}
	return nil
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
