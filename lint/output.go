package lint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// DisplayPath returns how a finding's file is shown: relative to base when
// the file is inside it, else as it is. An empty base shows paths as they
// are.
func DisplayPath(file, base string) string {
	if file == "" || base == "" || !filepath.IsAbs(file) {
		return file
	}
	rel, err := filepath.Rel(base, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return file
	}
	return rel
}

// WriteText writes the findings as a compiler does, one per line
// (file:line:col: severity: message [rule-id]), each followed by an
// indented line with its fix. Paths are shown relative to base (see
// DisplayPath).
func WriteText(w io.Writer, findings []Finding, base string) error {
	// Streamed through one buffer and one line reused: a whole standard
	// library's findings are megabytes, which a buffer of the whole output
	// would copy each time it grew.
	bw := bufio.NewWriterSize(w, 64<<10)
	names := map[string]string{}
	var line []byte
	for _, f := range findings {
		name, ok := names[f.File]
		if !ok {
			name = DisplayPath(f.File, base)
			names[f.File] = name
		}
		line = append(f.appendText(line[:0], name), '\n')
		if f.Fix != "" {
			line = append(line, "    fix: "...)
			line = append(line, f.Fix...)
			line = append(line, '\n')
		}
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteJSON writes the findings as an indented JSON array (an empty array
// when there are none), paths shown relative to base.
func WriteJSON(w io.Writer, findings []Finding, base string) error {
	out := make([]Finding, len(findings))
	for i, f := range findings {
		f.File = DisplayPath(f.File, base)
		out[i] = f
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("encoding findings: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Summary is a one-line count of findings by severity:
// "1 error, 2 warnings, 0 notes".
func Summary(findings []Finding) string {
	c := Count(findings)
	plural := func(n int, one, many string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s", n, one)
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	return plural(c[Error], "error", "errors") + ", " + plural(c[Warning], "warning", "warnings") + ", " + plural(c[Info], "note", "notes")
}
