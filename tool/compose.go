package tool

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Diagnostic is a problem found while building an inventory: a file that
// could not be read, a syntax error, a name clash. Diagnostics never stop
// discovery; hosts show them (lcp check).
type Diagnostic struct {
	// Severity is "error", "warning" or "info".
	Severity string `json:"severity"`
	// Code is a short stable identifier, e.g. "duplicate-tool".
	Code    string `json:"code"`
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Tool    string `json:"tool,omitempty"`
}

func (d Diagnostic) String() string {
	loc := d.File
	if loc != "" && d.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, d.Line)
		if d.Column > 0 {
			loc = fmt.Sprintf("%s:%d", loc, d.Column)
		}
	}
	if loc != "" {
		return fmt.Sprintf("%s: %s: %s [%s]", loc, d.Severity, d.Message, d.Code)
	}
	return fmt.Sprintf("%s: %s [%s]", d.Severity, d.Message, d.Code)
}

// Inventory composes toolsets into one. Tools are listed in the order of
// the toolsets; when two toolsets offer the same name the first wins and
// the clash is recorded as a diagnostic. An Inventory is itself a Toolset.
type Inventory struct {
	mu     sync.Mutex
	sets   []Toolset
	diags  []Diagnostic
	owner  map[string]int // tool name -> index in sets, from the last listing
	closed bool
}

// Compose returns an inventory of the given toolsets.
func Compose(sets ...Toolset) *Inventory {
	return &Inventory{sets: sets}
}

// Add appends a toolset to the inventory; its tools come after the others.
func (inv *Inventory) Add(ts Toolset) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.closed {
		_ = ts.Close()
		return
	}
	inv.sets = append(inv.sets, ts)
	inv.owner = nil
}

// Tools lists the tools of every toolset, first name wins.
func (inv *Inventory) Tools(ctx context.Context) ([]Info, error) {
	inv.mu.Lock()
	if inv.closed {
		inv.mu.Unlock()
		return nil, &ClosedError{What: "inventory"}
	}
	sets := append([]Toolset(nil), inv.sets...)
	inv.mu.Unlock()
	// The lists first, to size the result: an inventory of thousands of
	// tools is listed once per command.
	lists := make([][]Info, len(sets))
	listErrs := make([]error, len(sets))
	total := 0
	for i, ts := range sets {
		lists[i], listErrs[i] = ts.Tools(ctx)
		total += len(lists[i])
	}
	var (
		diags []Diagnostic
		errs  []error
	)
	var all []Info
	if total > 0 {
		all = make([]Info, 0, total)
	}
	owner := make(map[string]int, total)
	var first map[string]int // where each name is in all; made at the first duplicate
	for i, infos := range lists {
		if err := listErrs[i]; err != nil {
			errs = append(errs, err)
			diags = append(diags, Diagnostic{Severity: "error", Code: "toolset-unavailable", Message: err.Error()})
			continue
		}
		for _, info := range infos {
			if _, dup := owner[info.Name]; dup {
				if first == nil {
					first = make(map[string]int, len(all))
					for k := range all {
						first[all[k].Name] = k
					}
				}
				diags = append(diags, Diagnostic{
					Severity: "warning", Code: "duplicate-tool", Tool: info.Name, File: info.Source,
					Message: fmt.Sprintf("tool %s is defined again (first in %s); the first one is kept", info.Name, sourceOf(all[first[info.Name]])),
				})
				continue
			}
			owner[info.Name] = i
			if first != nil {
				first[info.Name] = len(all)
			}
			all = append(all, info)
		}
	}
	inv.mu.Lock()
	inv.owner = owner
	inv.diags = diags
	inv.mu.Unlock()
	if len(all) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return all, nil
}

func sourceOf(i Info) string {
	if i.Source != "" {
		return i.Source
	}
	if i.Library.ID != "" {
		return "library " + i.Library.ID
	}
	return "an earlier toolset"
}

// Diagnostics returns the clashes and failures of the last listing.
func (inv *Inventory) Diagnostics() []Diagnostic {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return append([]Diagnostic(nil), inv.diags...)
}

// Handler returns a handler from the first toolset that has the tool.
func (inv *Inventory) Handler(ctx context.Context, name string) (Handler, error) {
	inv.mu.Lock()
	if inv.closed {
		inv.mu.Unlock()
		return nil, &ClosedError{What: "inventory"}
	}
	sets := append([]Toolset(nil), inv.sets...)
	idx, known := inv.owner[name]
	inv.mu.Unlock()
	if known && idx < len(sets) {
		if h, err := sets[idx].Handler(ctx, name); err == nil {
			return h, nil
		}
	}
	for _, ts := range sets {
		h, err := ts.Handler(ctx, name)
		if err == nil {
			return h, nil
		}
		var unknown *UnknownToolError
		if !errors.As(err, &unknown) {
			return nil, err
		}
	}
	return nil, &UnknownToolError{Name: name}
}

// Close closes every toolset and joins their errors.
func (inv *Inventory) Close() error {
	inv.mu.Lock()
	if inv.closed {
		inv.mu.Unlock()
		return nil
	}
	inv.closed = true
	sets := inv.sets
	inv.mu.Unlock()
	var errs []error
	for _, ts := range sets {
		if err := ts.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
