package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// optSpec describes which options of a command take a value, so that the
// scanner can tell values from operands.
type optSpec struct {
	short string   // letters of short options that take a value (-o FILE, -oFILE)
	long  []string // long options that take a value (--output FILE, --output=FILE)
}

// arg is one scanned argument: an option (with its value, if any) or an
// operand.
type arg struct {
	opt      string // "-o", "--output" (as written, without =value); "" for an operand
	value    string // the option's value or the operand's text
	hasValue bool
	word     *syntax.Word // the word holding the value or operand (nil for attached values)
	static   bool         // value is exact
}

func (a arg) isOpt(names ...string) bool { return slices.Contains(names, a.opt) }

// long reports whether a is a long option that GNU getopt could read as one
// of names: getopt accepts any unambiguous prefix, so "--out" is "--output".
func (a arg) long(names ...string) bool {
	given, ok := strings.CutPrefix(a.opt, "--")
	if !ok || given == "" {
		return false
	}
	for _, n := range names {
		if strings.HasPrefix(n, given) {
			return true
		}
	}
	return false
}

// scan splits a command's arguments into options and operands, the way GNU
// getopt would (options may follow operands; "--" ends them). It reports
// false, after asking, when an operand could turn into an option at run
// time.
func (c *classifier) scan(n syntax.Node, name string, words []*syntax.Word, spec optSpec) ([]arg, bool) {
	var out []arg
	for i := 0; i < len(words); i++ {
		w := analyze(words[i])
		if !w.optionSafe() {
			c.ask(n, "argument `%s` of %s is expanded at run time and could become an option", c.snippet(words[i]), name)
			return nil, false
		}
		text := w.text
		switch {
		case !w.static || text == "-" || !strings.HasPrefix(text, "-"):
			out = append(out, arg{value: text, word: words[i], static: w.static})
		case text == "--":
			for _, rest := range words[i+1:] {
				r := analyze(rest)
				out = append(out, arg{value: r.text, word: rest, static: r.static})
			}
			return out, true
		case strings.HasPrefix(text, "--"):
			opt, val, eq := strings.Cut(text, "=")
			a := arg{opt: opt, value: val, hasValue: eq, static: true}
			if !eq && takesLong(spec.long, opt[2:]) && i+1 < len(words) {
				i++
				v := analyze(words[i])
				a.value, a.hasValue, a.word, a.static = v.text, true, words[i], v.static
			}
			out = append(out, a)
		default:
			for j := 1; j < len(text); j++ {
				o := "-" + text[j:j+1]
				if strings.IndexByte(spec.short, text[j]) < 0 {
					out = append(out, arg{opt: o, static: true})
					continue
				}
				a := arg{opt: o, hasValue: true, static: true}
				if j+1 < len(text) {
					a.value = text[j+1:]
				} else if i+1 < len(words) {
					i++
					v := analyze(words[i])
					a.value, a.word, a.static = v.text, words[i], v.static
				}
				out = append(out, a)
				break
			}
		}
	}
	return out, true
}

// takesLong reports whether the long option given (without dashes), or a
// long option it abbreviates, takes a value.
func takesLong(long []string, given string) bool {
	for _, l := range long {
		if strings.HasPrefix(l, given) {
			return true
		}
	}
	return false
}

func operands(args []arg) []arg {
	var out []arg
	for _, a := range args {
		if a.opt == "" {
			out = append(out, a)
		}
	}
	return out
}
