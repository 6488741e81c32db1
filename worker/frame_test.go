package worker

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// feed runs a frameReader over data, delivered in chunks of at most chunk
// bytes, and returns the bodies it found and its first error.
func feed(data []byte, chunk, bufSize, max int) (bodies [][]byte, err error) {
	fr := newFrameReader(bufSize, max)
	for {
		for {
			body, _, err := fr.next()
			if err != nil {
				return bodies, err
			}
			if body == nil {
				break
			}
			bodies = append(bodies, append([]byte(nil), body...))
		}
		if len(data) == 0 {
			return bodies, nil
		}
		n := copy(fr.space()[:min(chunk, len(fr.space()))], data)
		fr.advance(n)
		data = data[n:]
	}
}

func TestFrameRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 200)
	var stream []byte
	stream = appendFrame(stream, []byte(`{"type":"cancel","id":7}`))
	stream = appendFrame(stream, []byte(`{"type":"output","id":1}`), []byte("\n"), []byte("a\nb"))
	stream = appendFrame(stream, big)
	for _, chunk := range []int{1, 3, 12, 64, 1 << 20} {
		for _, bufSize := range []int{64, 4096} {
			bodies, err := feed(stream, chunk, bufSize, 1<<20)
			if err != nil {
				t.Fatalf("chunk %d buf %d: %v", chunk, bufSize, err)
			}
			want := []string{`{"type":"cancel","id":7}`, "{\"type\":\"output\",\"id\":1}\na\nb", string(big)}
			if len(bodies) != len(want) {
				t.Fatalf("chunk %d buf %d: %d bodies, want %d", chunk, bufSize, len(bodies), len(want))
			}
			for i := range want {
				if string(bodies[i]) != want[i] {
					t.Errorf("chunk %d buf %d: body %d = %q, want %q", chunk, bufSize, i, bodies[i], want[i])
				}
			}
		}
	}
	h, p := splitBody([]byte("{\"type\":\"output\",\"id\":1}\na\nb"))
	if string(h) != `{"type":"output","id":1}` || string(p) != "a\nb" {
		t.Errorf("split: %q %q", h, p)
	}
}

func TestFrameReaderErrors(t *testing.T) {
	good := appendFrame(nil, []byte(`{"type":"result","id":1}`))
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)-2] ^= 1
	huge := binary.BigEndian.AppendUint32([]byte("LCP2"), 1<<30)
	huge = append(huge, 0, 0, 0, 0)
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"junk", []byte("hello world"), errNotAFrame},
		{"two bytes of junk", []byte("ab"), errNotAFrame},
		{"junk with a small length", []byte{0, 0, 0x10, 0}, errNotAFrame},
		{"junk after a frame", append(bytes.Clone(good), 'x'), errNotAFrame},
		{"old format", []byte{0, 0, 0, 2, '{', '}'}, errNotAFrame},
		{"too large", huge, errFrameTooLarge},
		{"corrupt", corrupt, errChecksum},
	} {
		_, err := feed(tc.in, 5, 64, 1<<20)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	// An incomplete frame is no error: more bytes may come.
	if bodies, err := feed(good[:len(good)-1], 5, 64, 1<<20); err != nil || len(bodies) != 0 {
		t.Errorf("partial frame: %d bodies, %v", len(bodies), err)
	}
	if _, err := feed(good[:2], 5, 64, 1<<20); err != nil {
		t.Errorf("partial magic: %v", err)
	}
}

// FuzzFrameReader feeds arbitrary bytes to the frame reader and header
// parser, which read what a (possibly broken) worker wrote.
func FuzzFrameReader(f *testing.F) {
	f.Add(appendFrame(nil, []byte(`{"type":"result","id":1}`), []byte("\n\"x\"")), 7)
	f.Add([]byte("LCP2\x00\x00\x00\x02\x00\x00\x00\x00{}"), 1)
	f.Add([]byte{0, 0, 0, 5, 'n', 'u', 'l', 'l', '\n'}, 3)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		if chunk <= 0 || chunk > 1<<16 {
			chunk = 1 << 16
		}
		bodies, _ := feed(data, chunk, 256, 1<<16)
		for _, b := range bodies {
			if len(b) > 1<<16 {
				t.Fatalf("frame over the limit: %d bytes", len(b))
			}
			h, _ := splitBody(b)
			if hdr, err := parseHeader(h); err == nil && hdr.Type == "" {
				t.Fatal("header without a type accepted")
			}
		}
	})
}

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		in      string
		typ     string
		id      uint64
		wantErr bool
	}{
		{in: `{"type":"result","id":42}`, typ: "result", id: 42},
		{in: `{"type":"result","id":42,"converted":[]}`, typ: "result", id: 42},
		{in: `{"type":"result","id":-1}`, wantErr: true},
		{in: `{"type":"result","id":1e3}`, wantErr: true},
		{in: `{"type":"output","id":7,"stream":"stdout"}`, typ: "output", id: 7},
		{in: `{"id":7}`, wantErr: true},
		{in: `{"type":"result","id":`, wantErr: true},
		{in: `nonsense`, wantErr: true},
	} {
		h, err := parseHeader([]byte(tc.in))
		if tc.wantErr {
			if err == nil {
				t.Errorf("%s: no error", tc.in)
			}
			continue
		}
		if err != nil || h.Type != tc.typ || h.ID != tc.id {
			t.Errorf("%s: %+v, %v", tc.in, h, err)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "tool_x", `a"b\c`, "tab\tnl\n\x00\x1f", "naïve ｆｕｌｌ 😀", "bad\xffutf8\xc3", "<&>\u2028"} {
		got := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("%q: %s is not JSON: %v", s, got, err)
			continue
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want {
			t.Errorf("%q: round trip gives %q", s, back)
		}
	}
}

func TestCallFrame(t *testing.T) {
	req := &Request{Function: "tool_\"x", Args: json.RawMessage(`{"a": [1,
2]}`), Handlers: Handlers{Interact: true}, HasLLM: true, Timeout: time.Second}
	frame := appendCallFrame(nil, "call", 9, req, &eventHost{}, false)
	bodies, err := feed(frame, 1<<20, 4096, 1<<20)
	if err != nil || len(bodies) != 1 {
		t.Fatalf("%d bodies, %v", len(bodies), err)
	}
	var got map[string]any
	if err := json.Unmarshal(bodies[0], &got); err != nil {
		t.Fatalf("%s: %v", bodies[0], err)
	}
	want := `{"args":{"a":[1,2]},"context":{},"ev":[true,true],"fn":"tool_\"x","h":[false,true],"id":9,"llm":true,"type":"call"}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("call frame\n got %s\nwant %s", b, want)
	}
	frame = appendCallFrame(nil, "load", 10, &Request{Config: json.RawMessage(`{"k":1}`)}, nil, true)
	bodies, _ = feed(frame, 1<<20, 4096, 1<<20)
	if want := `{"type":"load","id":10,"h":[false,false],"ev":[false,false],"args":{},"context":{},"config":{"k":1}}`; string(bodies[0]) != want {
		t.Errorf("load frame\n got %s\nwant %s", bodies[0], want)
	}
}
