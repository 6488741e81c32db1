package sandbox

import (
	"fmt"
	"strings"
)

// gitVar is one variable of a git configuration file. Section and Key are
// lower case (git compares them so); Sub keeps its case.
type gitVar struct {
	Section, Sub, Key, Value string
	Line                     int
}

// maxGitConfig bounds the configuration file lcp reads (git's own files
// are a few kilobytes).
const maxGitConfig = 4 << 20

// parseGitConfig parses a git configuration file the way git reads it:
// "[section]", "[section "sub"]" and the old "[section.sub]" headers,
// "key = value" and bare "key" (true) lines, "#" and ";" comments, double
// quotes, backslash escapes and continuation lines. Anything git would
// refuse is an error naming the line.
func parseGitConfig(src []byte) ([]gitVar, error) {
	if len(src) > maxGitConfig {
		return nil, fmt.Errorf("larger than %d bytes", maxGitConfig)
	}
	s := string(src)
	s = strings.TrimPrefix(s, "\ufeff")
	var out []gitVar
	section, sub := "", ""
	line := 1
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
	}
	for i < len(s) {
		skipSpace()
		if i >= len(s) {
			break
		}
		switch c := s[i]; {
		case c == '\n':
			line++
			i++
		case c == '#' || c == ';':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '[':
			var err error
			section, sub, err = parseGitHeader(s, &i)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
		case isGitKeyStart(c):
			if section == "" {
				return nil, fmt.Errorf("line %d: a variable before any section", line)
			}
			start := i
			for i < len(s) && isGitKeyChar(s[i]) {
				i++
			}
			v := gitVar{Section: section, Sub: sub, Key: strings.ToLower(s[start:i]), Line: line}
			skipSpace()
			switch {
			case i >= len(s) || s[i] == '\n' || s[i] == '#' || s[i] == ';':
				v.Value = "true"
			case s[i] == '=':
				i++
				val, lines, err := parseGitValue(s, &i)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", line+lines, err)
				}
				v.Value = val
				line += lines
			default:
				return nil, fmt.Errorf("line %d: %q after the name of variable %q", line, s[i], v.Key)
			}
			out = append(out, v)
		default:
			return nil, fmt.Errorf("line %d: unexpected %q", line, c)
		}
	}
	return out, nil
}

func isGitKeyStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isGitKeyChar(c byte) bool {
	return isGitKeyStart(c) || c >= '0' && c <= '9' || c == '-'
}

// parseGitHeader parses "[section]", "[section "sub"]" or "[section.sub]"
// at s[*i] == '['.
func parseGitHeader(s string, i *int) (section, sub string, err error) {
	j := *i + 1
	start := j
	for j < len(s) && (isGitKeyChar(s[j]) || s[j] == '.') {
		j++
	}
	name := s[start:j]
	if name == "" {
		return "", "", fmt.Errorf("a section header without a name")
	}
	if j < len(s) && s[j] == ']' {
		*i = j + 1
		if dot := strings.IndexByte(name, '.'); dot >= 0 {
			return strings.ToLower(name[:dot]), strings.ToLower(name[dot+1:]), nil
		}
		return strings.ToLower(name), "", nil
	}
	if strings.Contains(name, ".") {
		return "", "", fmt.Errorf("section %q: a dot in a section name", name)
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j >= len(s) || s[j] != '"' {
		return "", "", fmt.Errorf("section %q: the header does not end with ]", name)
	}
	j++
	var b strings.Builder
	for {
		if j >= len(s) || s[j] == '\n' {
			return "", "", fmt.Errorf("section %q: an unterminated subsection name", name)
		}
		c := s[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			j++
			if j >= len(s) || s[j] == '\n' {
				return "", "", fmt.Errorf("section %q: an unterminated subsection name", name)
			}
			c = s[j]
		}
		b.WriteByte(c)
		j++
	}
	j++
	if j >= len(s) || s[j] != ']' {
		return "", "", fmt.Errorf("section %q: the header does not end with ]", name)
	}
	*i = j + 1
	return strings.ToLower(name), b.String(), nil
}

// parseGitValue parses a value from s[*i] to the end of its line (after
// continuations), returning it and the number of newlines it spanned.
func parseGitValue(s string, i *int) (string, int, error) {
	var b strings.Builder
	quoted := false
	lines := 0
	pending := 0 // unquoted spaces not yet written: trailing ones are dropped
	started := false
	j := *i
	for ; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '\n':
			if quoted {
				return "", lines, fmt.Errorf("an unterminated quoted value")
			}
			*i = j
			return b.String(), lines, nil
		case !quoted && (c == '#' || c == ';'):
			for j < len(s) && s[j] != '\n' {
				j++
			}
			*i = j
			return b.String(), lines, nil
		case !quoted && (c == ' ' || c == '\t' || c == '\r'):
			if started {
				pending++
			}
			continue
		case c == '"':
			quoted = !quoted
		case c == '\\':
			j++
			if j >= len(s) {
				return "", lines, fmt.Errorf("a backslash at the end of the file")
			}
			var e byte
			switch s[j] {
			case '\n':
				lines++
				continue
			case '\r':
				if j+1 < len(s) && s[j+1] == '\n' {
					j++
					lines++
					continue
				}
				return "", lines, fmt.Errorf("an invalid escape \\r")
			case 'n':
				e = '\n'
			case 't':
				e = '\t'
			case 'b':
				e = '\b'
			case '"', '\\':
				e = s[j]
			default:
				return "", lines, fmt.Errorf("an invalid escape \\%c", s[j])
			}
			b.WriteString(strings.Repeat(" ", pending))
			pending = 0
			b.WriteByte(e)
			started = true
		default:
			b.WriteString(strings.Repeat(" ", pending))
			pending = 0
			b.WriteByte(c)
			started = true
		}
		if c == '"' {
			b.WriteString(strings.Repeat(" ", pending))
			pending = 0
			started = true
		}
	}
	if quoted {
		return "", lines, fmt.Errorf("an unterminated quoted value")
	}
	*i = j
	return b.String(), lines, nil
}
