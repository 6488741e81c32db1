package worker

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The wire format shared with lcp_worker.py: every message is a frame made of
// a 4-byte big-endian length and a body. The body is a JSON object (the
// header), optionally followed by a newline and a raw payload that is passed
// through without being re-encoded (tool results, arguments, captured
// output). JSON text never contains a raw newline, so the first one ends the
// header.

// protocolVersion is the version the worker must announce in its hello.
const protocolVersion = 1

// frameHeaderLimit bounds the JSON header of a frame; payloads carry the bulk.
const frameHeaderLimit = 1 << 20

// errFrameTooLarge reports a frame above the reader's limit.
var errFrameTooLarge = errors.New("frame too large")

// readFrame reads one frame and splits it into header and payload. max bounds
// the body size; a larger frame is a protocol violation (the stream cannot be
// trusted any more).
func readFrame(r *bufio.Reader, max int) (header, payload []byte, err error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, nil, err
	}
	n := binary.BigEndian.Uint32(lenBuf[:])
	if int64(n) > int64(max) {
		return nil, nil, fmt.Errorf("%w: %d bytes, limit %d", errFrameTooLarge, n, max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, err
	}
	header, payload = splitBody(body)
	if len(header) > frameHeaderLimit {
		return nil, nil, fmt.Errorf("%w: header of %d bytes", errFrameTooLarge, len(header))
	}
	return header, payload, nil
}

// splitBody separates the JSON header from the raw payload.
func splitBody(body []byte) (header, payload []byte) {
	if i := bytes.IndexByte(body, '\n'); i >= 0 {
		return body[:i], body[i+1:]
	}
	return body, nil
}

// appendFrame appends the frame for a header value and an optional payload.
func appendFrame(dst []byte, header any, payload ...[]byte) ([]byte, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return dst, err
	}
	n := len(h)
	if len(payload) > 0 {
		n++
		for _, p := range payload {
			n += len(p)
		}
	}
	if uint64(n) > 1<<32-1 {
		return dst, fmt.Errorf("%w: %d bytes", errFrameTooLarge, n)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, h...)
	if len(payload) > 0 {
		dst = append(dst, '\n')
		for _, p := range payload {
			dst = append(dst, p...)
		}
	}
	return dst, nil
}

// rawFrame returns the frame of raw bytes (used for the program source).
func rawFrame(b []byte) []byte {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	return append(out, b...)
}

// inHeader is every field a frame from the worker may carry.
type inHeader struct {
	Type string `json:"type"`
	ID   uint64 `json:"id"`
	CID  string `json:"cid"`
	RID  uint64 `json:"rid"`

	// hello
	Protocol int    `json:"protocol"`
	Python   string `json:"python"`
	PID      int    `json:"pid"`
	Error    string `json:"error"`

	// result
	Cancelled      bool            `json:"cancelled"`
	Exception      *Exception      `json:"exception"`
	LoadError      *Exception      `json:"load_error"`
	Internal       *Exception      `json:"internal"`
	NotModuleLevel bool            `json:"not_module_level"`
	Converted      json.RawMessage `json:"converted"`
	TooLarge       int64           `json:"too_large"`
	Functions      []string        `json:"functions"`

	// output
	Stream  string `json:"stream"`
	Dropped int64  `json:"dropped"`

	// request
	Kind        string   `json:"kind"`
	Source      string   `json:"source"`
	ScriptLabel string   `json:"script_label"`
	Argv        []string `json:"argv"`
	Prompt      string   `json:"prompt"`
	Name        string   `json:"name"`

	// log
	Level string `json:"level"`
	Msg   string `json:"msg"`
}

// resultPrefix starts the header of a plain result, the most common frame;
// the worker writes it byte for byte, so it is parsed without reflection.
var resultPrefix = []byte(`{"type":"result","id":`)

// parseHeader decodes a frame header from the worker.
func parseHeader(b []byte) (*inHeader, error) {
	if rest, ok := bytes.CutPrefix(b, resultPrefix); ok && len(rest) > 1 && len(rest) <= 21 && rest[len(rest)-1] == '}' {
		if id, err := strconv.ParseUint(string(rest[:len(rest)-1]), 10, 64); err == nil {
			return &inHeader{Type: "result", ID: id}, nil
		}
	}
	h := new(inHeader)
	if err := json.Unmarshal(b, h); err != nil {
		return nil, err
	}
	if h.Type == "" {
		return nil, errors.New("frame without a type")
	}
	return h, nil
}
