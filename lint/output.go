package lint

import (
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
	var b bytes.Buffer
	names := map[string]string{}
	for _, f := range findings {
		name, ok := names[f.File]
		if !ok {
			name = DisplayPath(f.File, base)
			names[f.File] = name
		}
		b.Write(f.appendText(nil, name))
		b.WriteByte('\n')
		if f.Fix != "" {
			b.WriteString("    fix: ")
			b.WriteString(f.Fix)
			b.WriteByte('\n')
		}
	}
	_, err := w.Write(b.Bytes())
	return err
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
