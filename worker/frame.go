package worker

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"unicode/utf8"
)

// The wire format shared with lcp_worker.py. Every message is a frame: the
// magic "LCP2", the body's length and the CRC-32 (IEEE) of the body, each a
// 4-byte big-endian field, then the body. Bodies the engine sends are one
// JSON object. Bodies the worker sends are a JSON object (the header),
// optionally followed by a newline and a raw payload that is passed through
// without being re-encoded (tool results, captured output). JSON text never
// contains a raw newline, so the first one ends the header.
//
// The magic lets the reader reject bytes that are not a frame as soon as
// they arrive (a tool writing into the protocol pipe), instead of waiting
// for a body whose length is garbage; the checksum catches bytes written
// into the middle of a frame.

// protocolVersion is the version the worker must announce in its hello.
const protocolVersion = 2

// prefixLen is the size of a frame's magic, length and checksum.
const prefixLen = 12

var frameMagic = [4]byte{'L', 'C', 'P', '2'}

// frameHeaderLimit bounds the JSON header of a frame; payloads carry the bulk.
const frameHeaderLimit = 1 << 20

var (
	// errNotAFrame reports bytes that do not start with the frame magic.
	errNotAFrame = errors.New("bytes that are not a frame")
	// errFrameTooLarge reports a frame above the reader's limit.
	errFrameTooLarge = errors.New("a frame too large")
	// errChecksum reports a frame whose body does not match its checksum.
	errChecksum = errors.New("a frame that fails its checksum")
)

// startFrame appends room for a frame prefix; endFrame fills it in once
// the body that follows is complete.
func startFrame(dst []byte) []byte {
	return append(dst, make([]byte, prefixLen)...)
}

func endFrame(buf []byte, start int) []byte {
	body := buf[start+prefixLen:]
	copy(buf[start:], frameMagic[:])
	binary.BigEndian.PutUint32(buf[start+4:], uint32(len(body)))
	binary.BigEndian.PutUint32(buf[start+8:], crc32.ChecksumIEEE(body))
	return buf
}

// appendFrame appends the frame of a body made of parts.
func appendFrame(dst []byte, parts ...[]byte) []byte {
	start := len(dst)
	dst = startFrame(dst)
	for _, p := range parts {
		dst = append(dst, p...)
	}
	return endFrame(dst, start)
}

// jsonFrame returns the frame of a JSON-encoded value.
func jsonFrame(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return appendFrame(nil, b), nil
}

// rawFrame returns a frame of the bootstrap's simpler format (a 4-byte
// length, then the bytes), used for the program source before the protocol
// starts.
func rawFrame(b []byte) []byte {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	return append(out, b...)
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// frameReader splits the bytes read from the reply pipe into frames.
type frameReader struct {
	buf  []byte // buf[r:w] holds bytes not yet parsed
	r, w int
	big  []byte // the body of a frame larger than buf, being filled
	bigN int
	crc  uint32 // the checksum of big
	max  int    // the largest body accepted
}

func newFrameReader(size, max int) frameReader {
	return frameReader{buf: make([]byte, size), max: max}
}

// space returns where the next read should go.
func (f *frameReader) space() []byte {
	if f.big != nil {
		return f.big[f.bigN:]
	}
	if f.r > 0 {
		f.w = copy(f.buf, f.buf[f.r:f.w])
		f.r = 0
	}
	return f.buf[f.w:]
}

// advance records n bytes read into space.
func (f *frameReader) advance(n int) {
	if f.big != nil {
		f.bigN += n
	} else {
		f.w += n
	}
}

// next returns the next complete frame's body, or nil when more bytes are
// needed. A body that is not owned points into the reader's buffer and is
// valid until the next call of space. An error means the stream cannot be
// trusted any more.
func (f *frameReader) next() (body []byte, owned bool, err error) {
	if f.big != nil {
		if f.bigN < len(f.big) {
			return nil, false, nil
		}
		body, f.big = f.big, nil
		if crc32.ChecksumIEEE(body) != f.crc {
			return nil, false, errChecksum
		}
		return body, true, nil
	}
	avail := f.buf[f.r:f.w]
	// Check the magic byte by byte: junk is refused at once, even when
	// fewer bytes than a prefix arrived.
	if n := min(len(avail), len(frameMagic)); !bytes.Equal(avail[:n], frameMagic[:n]) {
		return nil, false, fmt.Errorf("%w: %q", errNotAFrame, avail[:min(len(avail), 32)])
	}
	if len(avail) < prefixLen {
		return nil, false, nil
	}
	n := binary.BigEndian.Uint32(avail[4:])
	crc := binary.BigEndian.Uint32(avail[8:])
	if int64(n) > int64(f.max) {
		return nil, false, fmt.Errorf("%w (%d bytes, over the limit of %d)", errFrameTooLarge, n, f.max)
	}
	end := prefixLen + int(n)
	if end <= len(avail) {
		body = avail[prefixLen:end]
		f.r += end
		if crc32.ChecksumIEEE(body) != crc {
			return nil, false, errChecksum
		}
		return body, false, nil
	}
	if end > len(f.buf) {
		f.big = make([]byte, n)
		f.bigN = copy(f.big, avail[prefixLen:])
		f.crc = crc
		f.r, f.w = 0, 0
	}
	return nil, false, nil
}

// splitBody separates the JSON header from the raw payload.
func splitBody(body []byte) (header, payload []byte) {
	if i := bytes.IndexByte(body, '\n'); i >= 0 {
		return body[:i], body[i+1:]
	}
	return body, nil
}

// inHeader is every field a frame from the worker may carry.
type inHeader struct {
	Type string `json:"type"`
	ID   uint64 `json:"id"`
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

	// diag
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
	if len(b) > frameHeaderLimit {
		return nil, fmt.Errorf("%w (a header of %d bytes)", errFrameTooLarge, len(b))
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
