package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/tool"
)

// warnUnknownArgs tells the person at the terminal about arguments the
// tool has no parameter for: the engine drops them (the LCP rule, which
// keeps a model's stray arguments harmless), so a misspelt name would
// otherwise only show up as a missing argument of the tool. Each gets the
// nearest parameter names. A Python tool that takes **kwargs receives
// every argument, and gets no warning.
func warnUnknownArgs(ctx context.Context, env *Env, eng *lcp.Engine, name string, args json.RawMessage) {
	var given map[string]json.RawMessage
	if len(args) == 0 || json.Unmarshal(args, &given) != nil || len(given) == 0 {
		return
	}
	params, ok := toolParams(ctx, eng, name)
	if !ok {
		return
	}
	var unknown []string
	for k := range given {
		if !slices.Contains(params, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		hint := didYouMean(suggest(k, params))
		if hint == "" && len(params) > 0 {
			hint = " Its parameters: " + strings.Join(params, ", ") + "."
		}
		fmt.Fprintf(env.Stderr, "lcp: warning: %s has no parameter %q (it is dropped).%s\n", name, k, hint)
	}
}

// toolParams are the parameter names of the tool's input schema; ok is
// false when the tool is unknown, declares no properties, takes any
// argument (additionalProperties) or is a Python tool with **kwargs.
func toolParams(ctx context.Context, eng *lcp.Engine, name string) (params []string, ok bool) {
	infos, err := eng.Tools(ctx)
	if err != nil {
		return nil, false
	}
	i := slices.IndexFunc(infos, func(in tool.Info) bool { return in.Name == name })
	if i < 0 {
		return nil, false
	}
	var s struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	}
	if json.Unmarshal(infos[i].InputSchema, &s) != nil || s.Properties == nil {
		return nil, false
	}
	if a := strings.TrimSpace(string(s.AdditionalProperties)); a != "" && a != "false" {
		return nil, false
	}
	if takesKwargs(eng, name) {
		return nil, false
	}
	for k := range s.Properties {
		params = append(params, k)
	}
	slices.Sort(params)
	return params, true
}

// takesKwargs reports whether name is a Python tool that declares
// **kwargs.
func takesKwargs(eng *lcp.Engine, name string) bool {
	for _, f := range eng.Files() {
		if f.Source == nil {
			continue
		}
		for _, t := range f.Source.Tools {
			if t.Name == name && t.AcceptsKwargs {
				return true
			}
		}
	}
	return false
}

// bindFailure reports whether a failed result of the Python tool name is
// Python's TypeError raised by the call itself, before any line of the
// tool ran: the function could not be called with these arguments (a
// required one missing, often because its name was misspelt and dropped).
// The worker removes its own frames from the traceback, so such a
// traceback names no file at all; a TypeError raised inside the tool
// names the tool's file.
func bindFailure(res *tool.Result, name string) bool {
	prefix := "Error executing '" + name + "': TypeError: "
	if res.Success || !strings.HasPrefix(res.Error, prefix) {
		return false
	}
	tb := res.Traceback()
	return tb != "" && !strings.Contains(tb, "\n  File ")
}

// bindHelp says what to do about a call bindFailure recognised: Python's
// words, the tool's parameters, and --validate-args.
func bindHelp(ctx context.Context, eng *lcp.Engine, name string, res *tool.Result) string {
	msg := strings.TrimPrefix(res.Error, "Error executing '"+name+"': TypeError: ")
	msg = "the arguments do not fit " + name + ": " + oneLine(msg)
	if params, ok := toolParams(ctx, eng, name); ok && len(params) > 0 {
		msg += "; its parameters: " + strings.Join(params, ", ")
	}
	return msg + " (run lcp list --json to see its schema; --validate-args checks arguments against it before the call)"
}
