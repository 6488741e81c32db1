package pysrc

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// paramDocCases are lines that take the pattern's every path: prefixes,
// names that start with a digit of the prefix, types in parentheses that
// do or do not lead on, separators, space to give back, Unicode digits
// and spaces.
var paramDocCases = []string{
	"x: the x", "x : y", "x(int): y", "x (int) : y", "x (int) - y", "x - y", "x -- double", "x:", "x: ", "x:\u3000",
	"x:  \u2003", "- x: y", "* x: y", "1. x: y", "12abc: y", "123: y", "1.2.3 x: y", "-1: y", "--x: y", "٣ x: y", "٣x: y",
	"x(): y", "x(a)(b): y", "x (a: y", "x (a) b: y", "x(a)-: y", "x)(: y", "(x): y", "x\u00a0: y", "x\u2028: y", ": y",
	"", "x", "x y: z", "_: y", "x_1 (list[int]): y", "a-b: c", "a - : c", "a(b)c", "a(:)-x", "a(:)", "a (b)", "1-2-3: x",
	"...: x", "*a(b: c)*: d", "ｘ: y", "x:\ty", "x\x1c: y", "x: y\x85", "\x85x: y", "9", "9:", "9: ", "9:\u3000",
	"x: \xed\xa0\x80", "\xff x: y", "a\nb: c", "a: b\nc",
}

func TestMatchParamDoc(t *testing.T) {
	for _, line := range paramDocCases {
		checkParamDoc(t, line)
	}
}

func checkParamDoc(t *testing.T, line string) {
	t.Helper()
	name, rest, ok := matchParamDoc(line)
	m := paramDocRE().FindStringSubmatch(line)
	if ok != (m != nil) || ok && (name != m[1] || rest != m[3]) {
		t.Fatalf("matchParamDoc(%q) = %q, %q, %v; the regexp gives %q", line, name, rest, ok, m)
	}
}

// FuzzMatchParamDoc holds matchParamDoc to the regexp it replaces.
func FuzzMatchParamDoc(f *testing.F) {
	for _, line := range paramDocCases {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		checkParamDoc(t, line)
		// Lines made of the pattern's own characters reach more paths.
		var b strings.Builder
		for _, r := range line {
			b.WriteString([]string{"x", "1", "-", "*", ".", " ", "(", ")", ":", "\u3000", "٣", "_", "\t"}[int(r)%13])
		}
		checkParamDoc(t, b.String())
	})
}

func BenchmarkParamDocs(b *testing.B) {
	doc := cleandoc(`Search the files of the workspace.

    Args:
        pattern (str): The regular expression to look for.
        path (str): Where to look. Defaults to the workspace.
        max_results (int): At most this many results.
        - case_sensitive: whether case matters
        1. include_hidden -- look into dot files too

    Returns:
        dict: the matches, by file.
    `)
	for b.Loop() {
		paramDocs(doc)
	}
}

// cleandocLines is cleandoc as it was written first, with a list of
// lines: the reference of FuzzCleandoc.
func cleandocLines(doc string) string {
	lines := strings.Split(expandTabs(doc), "\n")
	margin := -1
	for _, line := range lines[1:] {
		content := utf8.RuneCountInString(pyLStrip(line))
		if content > 0 {
			indent := utf8.RuneCountInString(line) - content
			if margin < 0 || indent < margin {
				margin = indent
			}
		}
	}
	lines[0] = pyLStrip(lines[0])
	if margin >= 0 {
		for i := 1; i < len(lines); i++ {
			lines[i] = dropRunes(lines[i], margin)
		}
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	return strings.Join(lines, "\n")
}

func FuzzCleandoc(f *testing.F) {
	for _, s := range []string{"", "x", "  x\n", "\n\n  a\n\n    b\n\n", "a\n\tb\n  \n  c", "\n \n", " \u3000x\n\u3000 y", "a\r\nb\n  \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if got, want := cleandoc(doc), cleandocLines(doc); got != want {
			t.Fatalf("cleandoc(%q) = %q, want %q", doc, got, want)
		}
	})
}

// TestSchemaSize: the size InputSchema reserves is enough for schemas
// without escapes, so that they take one allocation.
func TestSchemaSize(t *testing.T) {
	src := "def tool_a(x: int, y: str = 'é', *, z: list = [1, 2]):\n    \"\"\"Do.\n\n    x: the x\n    \"\"\"\n\ndef tool_b():\n    pass\n"
	f, err := ReadFile("s.py", []byte(src))
	if err != nil || len(f.Tools) != 2 {
		t.Fatalf("ReadFile: %v, %v", f, err)
	}
	for _, tl := range f.Tools {
		if got, size := len(tl.InputSchema()), tl.schemaSize(); got > size {
			t.Errorf("%s: schema of %d bytes, %d reserved", tl.Name, got, size)
		}
	}
}

// pyLinesRunes is pyLines as it was written first, rune by rune: the
// reference of FuzzPyLines.
func pyLinesRunes(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isLineBoundary(r) {
			i += n
			continue
		}
		out = append(out, s[start:i])
		i += n
		if r == '\r' && i < len(s) && s[i] == '\n' {
			i++
		}
		start = i
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func FuzzPyLines(f *testing.F) {
	for _, s := range []string{"", "a", "a\nb\r\nc\rd\ve\ff\x1cg\u0085h\u2028i\u2029j\n", "\r\r\n\n", "\xff\n\xc2", "é\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := slices.Collect(pyLines(s)), pyLinesRunes(s); !slices.Equal(got, want) {
			t.Fatalf("pyLines(%q) = %q, want %q", s, got, want)
		}
	})
}
