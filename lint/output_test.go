package lint

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestWriteTextStreams checks the streamed text against each finding's
// Format, over more than one buffer's worth of findings (the line buffer
// is reused between findings), and that a failing writer's error comes
// back.
func TestWriteTextStreams(t *testing.T) {
	var findings []Finding
	var want strings.Builder
	for i := range 3000 {
		f := Finding{Severity: Warning, Code: "some-rule", File: fmt.Sprintf("/w/file%d.py", i%7),
			Line: i + 1, Column: i % 5, Message: strings.Repeat("m", i%90)}
		if i%3 == 0 {
			f.Fix = "do this " + strings.Repeat("x", i%40)
		}
		findings = append(findings, f)
		want.WriteString(f.Format(DisplayPath(f.File, "/w")) + "\n")
		if f.Fix != "" {
			want.WriteString("    fix: " + f.Fix + "\n")
		}
	}
	var out bytes.Buffer
	if err := WriteText(&out, findings, "/w"); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Fatalf("WriteText differs from the findings' Format (%d bytes against %d)", out.Len(), want.Len())
	}
	if out.Len() <= 64<<10 {
		t.Fatalf("only %d bytes: the test must pass the buffer's size", out.Len())
	}

	boom := errors.New("disk full")
	if err := WriteText(failingWriter{boom}, findings, "/w"); !errors.Is(err, boom) {
		t.Fatalf("WriteText to a failing writer: %v, want %v", err, boom)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }
