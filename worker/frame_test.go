package worker

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		payload  [][]byte
		wantBody string
	}{
		{name: "header only", wantBody: `{"type":"cancel","id":7}`},
		{name: "payload", payload: [][]byte{[]byte(`{"a":`), []byte("1}\n2")}, wantBody: "{\"type\":\"cancel\",\"id\":7}\n{\"a\":1}\n2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := appendFrame(nil, idHeader{Type: "cancel", ID: 7}, tc.payload...)
			if err != nil {
				t.Fatal(err)
			}
			if n := binary.BigEndian.Uint32(b); int(n) != len(b)-4 || string(b[4:]) != tc.wantBody {
				t.Fatalf("frame %q", b)
			}
			h, p, err := readFrame(bufio.NewReader(bytes.NewReader(b)), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if string(h) != `{"type":"cancel","id":7}` {
				t.Errorf("header %q", h)
			}
			if want := bytes.Join(tc.payload, nil); !bytes.Equal(p, want) {
				t.Errorf("payload %q, want %q", p, want)
			}
		})
	}
}

func TestReadFrameErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, io.EOF},
		{"short length", []byte{0, 0}, io.ErrUnexpectedEOF},
		{"short body", []byte{0, 0, 0, 9, '{'}, io.ErrUnexpectedEOF},
		{"too large", []byte{0xff, 0, 0, 0}, errFrameTooLarge},
	} {
		_, _, err := readFrame(bufio.NewReader(bytes.NewReader(tc.in)), 1<<20)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// FuzzReadFrame feeds arbitrary bytes to the frame reader and header parser,
// which read what a (possibly broken) worker wrote.
func FuzzReadFrame(f *testing.F) {
	good, _ := appendFrame(nil, map[string]any{"type": "result", "id": 1, "converted": []any{}}, []byte(`"x"`))
	f.Add(good)
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0, 0, 0, 5, 'n', 'u', 'l', 'l', '\n'})
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		for {
			h, p, err := readFrame(br, 1<<16)
			if err != nil {
				return
			}
			if len(h)+len(p) > 1<<16 {
				t.Fatalf("frame over the limit: %d bytes", len(h)+len(p))
			}
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
		{in: `{"type":"output","id":7,"cid":"c","stream":"stdout"}`, typ: "output", id: 7},
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
