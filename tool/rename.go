package tool

import (
	"context"
	"errors"
	"fmt"
)

// Rename returns a toolset that lists and calls tools of ts under other
// names: names maps a tool's name in ts to its new name; tools not in the
// map keep theirs. It is how a host gives a tool the name its clients
// expect — a Python tool_fetch_page served to MCP clients as fetch_page,
// say — without touching the tool. The old name of a renamed tool is no
// longer listed or callable, and a renamed tool hides a tool of ts that
// already had its new name. A call runs as the tool itself: its requests
// and events carry the tool's own name. Closing the toolset closes ts.
//
// The new names must be valid (CheckName) and distinct. MCP servers and
// LLM specs then use them like any name (WireNames keeps a name that is
// already a valid wire name).
func Rename(ts Toolset, names map[string]string) (Toolset, error) {
	back := make(map[string]string, len(names))
	for old, name := range names {
		if err := CheckName(name); err != nil {
			return nil, fmt.Errorf("renaming %s: %w", old, err)
		}
		if prev, dup := back[name]; dup {
			return nil, fmt.Errorf("renaming %s and %s: both would be named %s", prev, old, name)
		}
		back[name] = old
	}
	return &renamed{ts: ts, names: names, back: back}, nil
}

type renamed struct {
	ts    Toolset
	names map[string]string // old -> new
	back  map[string]string // new -> old
}

func (r *renamed) Tools(ctx context.Context) ([]Info, error) {
	infos, err := r.ts.Tools(ctx)
	out := make([]Info, 0, len(infos))
	for _, info := range infos {
		if name, ok := r.names[info.Name]; ok {
			info.Name = name
		} else if _, hidden := r.back[info.Name]; hidden {
			continue
		}
		out = append(out, info)
	}
	return out, err
}

func (r *renamed) Handler(ctx context.Context, name string) (Handler, error) {
	if old, ok := r.back[name]; ok {
		return r.ts.Handler(ctx, old)
	}
	if _, ok := r.names[name]; ok {
		return nil, &UnknownToolError{Name: name}
	}
	h, err := r.ts.Handler(ctx, name)
	var unknown *UnknownToolError
	if errors.As(err, &unknown) {
		return nil, &UnknownToolError{Name: name}
	}
	return h, err
}

func (r *renamed) Close() error { return r.ts.Close() }
