package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
)

var errIOEOF = io.EOF

// Placeholders every transcript may use; any other ${NAME} in expected
// JSON is a variable.
const (
	Any   = "${ANY}"
	Num   = "${NUM}"
	Time  = "${TIME}"
	Work  = "${WORK}"
	Lines = "${LINES}"
)

var placeholderRE = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)\}`)

const durationRE = `[0-9][0-9.]*(?:ns|µs|us|ms|s|m|h)(?:[0-9][0-9.]*(?:ns|µs|us|ms|s|m|h))*`

// pattern turns one line of expected text into a regular expression.
func pattern(line, work string) (string, error) {
	var b strings.Builder
	last := 0
	for _, m := range placeholderRE.FindAllStringSubmatchIndex(line, -1) {
		b.WriteString(regexp.QuoteMeta(line[last:m[0]]))
		switch name := line[m[2]:m[3]]; name {
		case "ANY":
			b.WriteString(`.*?`)
		case "NUM":
			b.WriteString(`-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?`)
		case "TIME":
			b.WriteString(durationRE)
		case "WORK":
			b.WriteString(regexp.QuoteMeta(work))
		default:
			return "", fmt.Errorf("unknown placeholder ${%s} in text (text knows ANY, NUM, TIME, WORK, LINES)", name)
		}
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(line[last:]))
	return b.String(), nil
}

// MatchText says whether got is the expected text, placeholders allowed.
func MatchText(want, got, work string) (bool, error) {
	if !strings.Contains(want, "${") {
		return want == got, nil
	}
	var re strings.Builder
	re.WriteString(`\A`)
	lines := strings.SplitAfter(want, "\n")
	for i, l := range lines {
		if l == "" {
			continue
		}
		body, nl := strings.CutSuffix(l, "\n")
		if body == Lines {
			if i == len(lines)-1 || (i == len(lines)-2 && lines[i+1] == "") {
				re.WriteString(`(?s:.*)`) // the rest, ended by a newline or not
			} else {
				re.WriteString(`(?:[^\n]*\n)*?`)
			}
			continue
		}
		p, err := pattern(body, work)
		if err != nil {
			return false, err
		}
		re.WriteString(p)
		if nl {
			re.WriteString(`\n`)
		}
	}
	re.WriteString(`\z`)
	r, err := regexp.Compile(re.String())
	if err != nil {
		return false, fmt.Errorf("transcript: %w", err)
	}
	return r.MatchString(got), nil
}

// Normalize replaces the work directory in actual output by ${WORK}, for
// writing golden output.
func Normalize(got, work string) string {
	if work == "" {
		return got
	}
	return strings.ReplaceAll(got, work, Work)
}

// Vars are the values a transcript's ${NAME} variables are bound to.
type Vars map[string]json.RawMessage

// Expand replaces "${NAME}" values in a message to send by the bound
// values, and ${WORK} in strings by the work directory.
func Expand(msg json.RawMessage, vars Vars, work string) (json.RawMessage, error) {
	var err error
	out := placeholderRE.ReplaceAllFunc(msg, func(m []byte) []byte {
		name := string(m[2 : len(m)-1])
		if name == "WORK" {
			w, _ := json.Marshal(work)
			return w[1 : len(w)-1]
		}
		return m
	})
	// "${NAME}" as a whole value: the bound JSON.
	quoted := regexp.MustCompile(`"\$\{([A-Z][A-Z0-9_]*)\}"`)
	out = quoted.ReplaceAllFunc(out, func(m []byte) []byte {
		name := string(m[3 : len(m)-2])
		v, ok := vars[name]
		if !ok {
			if err == nil {
				err = fmt.Errorf("${%s} is not bound: a recv must show it first", name)
			}
			return m
		}
		return v
	})
	if err != nil {
		return nil, err
	}
	if !json.Valid(out) {
		return nil, fmt.Errorf("after expanding the variables, not JSON: %s", out)
	}
	return out, nil
}

// MatchJSON compares a received message with an expected one. Variables
// bound on the way are added to vars only when the whole message matches.
func MatchJSON(want, got json.RawMessage, vars Vars, work string) error {
	var w, g any
	if err := decode(want, &w); err != nil {
		return fmt.Errorf("expected message: %w", err)
	}
	if err := decode(got, &g); err != nil {
		return fmt.Errorf("received message is not JSON: %w", err)
	}
	bound := maps.Clone(vars)
	if bound == nil {
		bound = Vars{}
	}
	if err := matchValue("", w, g, bound, work); err != nil {
		return err
	}
	maps.Copy(vars, bound)
	return nil
}

func decode(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

func matchValue(path string, want, got any, vars Vars, work string) error {
	at := path
	if at == "" {
		at = "the message"
	}
	switch w := want.(type) {
	case string:
		if m := placeholderRE.FindStringSubmatch(w); m != nil && m[0] == w {
			switch m[1] {
			case "ANY":
				return nil
			case "NUM":
				if _, ok := got.(json.Number); !ok {
					return fmt.Errorf("%s: %s, want a number", at, show(got))
				}
				return nil
			case "TIME", "WORK", "LINES":
				// Text placeholders: matched below.
			default:
				raw, _ := json.Marshal(got)
				if v, ok := vars[m[1]]; ok {
					if !bytes.Equal(v, raw) {
						return fmt.Errorf("%s: %s, want %s (${%s})", at, raw, v, m[1])
					}
					return nil
				}
				vars[m[1]] = raw
				return nil
			}
		}
		g, ok := got.(string)
		if !ok {
			return fmt.Errorf("%s: %s, want %q", at, show(got), w)
		}
		ok, err := MatchText(w, g, work)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s: %q, want %q", at, g, w)
		}
		return nil
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !sameNumber(w, g) {
			return fmt.Errorf("%s: %s, want %s", at, show(got), w)
		}
		return nil
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %s, want an object", at, show(got))
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s: no %q", at, k)
			}
			if err := matchValue(path+"."+k, w[k], gv, vars, work); err != nil {
				return err
			}
		}
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if _, ok := w[k]; !ok {
				return fmt.Errorf("%s: unexpected %q: %s", at, k, show(g[k]))
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Errorf("%s: %s, want an array", at, show(got))
		}
		if len(g) != len(w) {
			return fmt.Errorf("%s: %d elements, want %d: %s", at, len(g), len(w), show(got))
		}
		for i := range w {
			if err := matchValue(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], vars, work); err != nil {
				return err
			}
		}
		return nil
	default: // bool, nil
		if want != got {
			return fmt.Errorf("%s: %s, want %s", at, show(got), show(want))
		}
		return nil
	}
}

func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, err1 := a.Float64()
	y, err2 := b.Float64()
	return err1 == nil && err2 == nil && x == y
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// Pretty is a message indented for a golden file, with the work directory
// replaced by ${WORK}.
func Pretty(msg json.RawMessage, work string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, msg, "", "  "); err != nil {
		return string(msg)
	}
	return Normalize(b.String(), jsonEscaped(work))
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
