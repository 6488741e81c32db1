package jsonindent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// reference is what Append replaces: json.Compact, then json.Indent with
// depth copies of indent as the prefix of every new line.
func reference(src []byte, indent string, depth int) ([]byte, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, src); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), strings.Repeat(indent, depth), indent); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func TestAppend(t *testing.T) {
	tests := []struct {
		in, want string
		depth    int
	}{
		{in: `1`, want: `1`},
		{in: ` -0.5e+10 `, want: `-0.5e+10`},
		{in: `"a\"b\\c\u00e9 \ud800"`, want: `"a\"b\\c\u00e9 \ud800"`},
		{in: `"<&> \u2028 é"`, want: `"<&> \u2028 é"`},
		{in: "\"\xff\"", want: "\"\xff\""},
		{in: `[]`, want: `[]`},
		{in: ` { } `, want: `{}`},
		{in: `[1,[],{},[2]]`, want: "[\n  1,\n  [],\n  {},\n  [\n    2\n  ]\n]"},
		{in: `{"a" : true, "b":[null,false]}`, want: "{\n  \"a\": true,\n  \"b\": [\n    null,\n    false\n  ]\n}"},
		{in: `{"a":{"b":1}}`, depth: 1, want: "{\n    \"a\": {\n      \"b\": 1\n    }\n  }"},
	}
	for _, tt := range tests {
		got, err := Append([]byte("x"), []byte(tt.in), "  ", tt.depth)
		if err != nil {
			t.Errorf("Append(%q): %v", tt.in, err)
			continue
		}
		if string(got) != "x"+tt.want {
			t.Errorf("Append(%q) = %q, want %q", tt.in, got, "x"+tt.want)
		}
		ref, err := reference([]byte(tt.in), "  ", tt.depth)
		if err != nil || !bytes.Equal(ref, got[1:]) {
			t.Errorf("encoding/json gives %q (%v) for %q", ref, err, tt.in)
		}
	}
}

func TestAppendInvalid(t *testing.T) {
	for _, in := range []string{
		``, ` `, `[`, `]`, `{`, `}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{1:2}`, `{"a" 1}`,
		`[1 2]`, `1 2`, `{}{}`, `[}`, `{]`, `"abc`, `"a\x"`, `"\u12"`, `"\u12g4"`, "\"a\nb\"", `"\`,
		`01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `truex`, `nul`, `fals`, `NaN`, `[1]x`, `'a'`,
	} {
		got, err := Append([]byte("keep"), []byte(in), "  ", 0)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Append(%q) = %q, %v; want a *SyntaxError", in, got, err)
			continue
		}
		if string(got) != "keep" {
			t.Errorf("Append(%q) changed dst on error: %q", in, got)
		}
		if json.Valid([]byte(in)) {
			t.Errorf("%q is valid for encoding/json", in)
		}
	}
}

func TestAppendTooDeep(t *testing.T) {
	ok := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if _, err := Append(nil, []byte(ok), "", 0); err != nil {
		t.Errorf("%d levels: %v", maxDepth, err)
	}
	deep := "[" + ok + "]"
	if _, err := Append(nil, []byte(deep), "", 0); !errors.Is(err, ErrTooDeep) {
		t.Errorf("%d levels: %v, want ErrTooDeep", maxDepth+1, err)
	}
	if json.Valid([]byte(deep)) {
		t.Errorf("encoding/json accepts %d levels", maxDepth+1)
	}
}

// FuzzAppend checks Append against encoding/json: the same verdict on
// every input and, for valid ones, the same bytes.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{`{"name":"tool_a","input_schema":{"type":"object","properties":{},"required":[]}}`,
		`[1,-2.5e3,"x\"y",true,false,null,{}]`, `{"a" : [ ] }`, `"\u00e9\n"`, `[1,]`, `01`, "\"\x01\""} {
		f.Add([]byte(s), 1)
	}
	f.Fuzz(func(t *testing.T, src []byte, depth int) {
		depth = max(0, depth%4)
		got, err := Append(nil, src, "  ", depth)
		want, werr := reference(src, "  ", depth)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, encoding/json: %v", src, err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %q\nwant %q", src, got, want)
		}
	})
}

func BenchmarkAppend(b *testing.B) {
	spec := []byte(`{"name":"tool_search","description":"Search the files of the workspace for a pattern.","input_schema":{"type":"object","properties":{"pattern":{"type":"string","description":"The regular expression to look for"},"path":{"type":"string","description":"Parameter 'path'","default":"."},"max_results":{"type":"integer","description":"At most this many","default":100}},"required":["pattern"]}}`)
	b.SetBytes(int64(len(spec)))
	b.Run("jsonindent", func(b *testing.B) {
		var dst []byte
		for b.Loop() {
			dst, _ = Append(dst[:0], spec, "  ", 1)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			_, _ = reference(spec, "  ", 1)
		}
	})
}

func ExampleAppend() {
	out, err := Append(nil, []byte(`{"a":[1,2],"b":{}}`), "  ", 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// {
	//   "a": [
	//     1,
	//     2
	//   ],
	//   "b": {}
	// }
}
