package lcp

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/builtin/pylib"
	"github.com/lcptools/lcp/tool"
)

// builtinIDs are the Go built-in libraries, in the default library's
// order.
var builtinIDs = []string{builtin.WorkspaceTools, builtin.SystemShell, builtin.ExecutePython}

// isBuiltin reports whether name is a Go built-in library.
func isBuiltin(name string) bool { return slices.Contains(builtinIDs, name) }

// builtinSet is the Go built-in libraries of an engine: all three when it
// serves the default library, else those mounted (--mount, --builtins,
// MountToolLibrary), in the order they were mounted. It is a Toolset.
type builtinSet struct {
	cfg *Config

	mu      sync.RWMutex
	built   map[string]*builtinLib // built on first use, mounted or not
	mounted []*builtinLib
	closed  bool
}

// builtinLib is one Go built-in library as a toolset of its own.
type builtinLib struct {
	id    string
	ts    tool.Toolset
	names []string
}

// lib builds (once) and returns the built-in library id.
func (s *builtinSet) lib(id string) (*builtinLib, error) {
	s.mu.RLock()
	l := s.built[id]
	s.mu.RUnlock()
	if l != nil {
		return l, nil
	}
	ts, err := builtin.New(&builtin.Options{Workspace: s.cfg.Workspace, Configs: s.cfg.HostToolConfigs, Python: s.cfg.Python, Libraries: []string{id}})
	if err != nil {
		return nil, err
	}
	infos, err := ts.Tools(context.Background())
	if err != nil {
		return nil, err
	}
	l = &builtinLib{id: id, ts: ts}
	for _, in := range infos {
		l.names = append(l.names, in.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.built[id]; old != nil {
		_ = ts.Close()
		return old, nil
	}
	if s.built == nil {
		s.built = map[string]*builtinLib{}
	}
	s.built[id] = l
	return l, nil
}

// mount adds the built-in library id; mounting it again does nothing.
func (s *builtinSet) mount(id string) error {
	l, err := s.lib(id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return &tool.ClosedError{What: "built-in library"}
	}
	if !slices.Contains(s.mounted, l) {
		s.mounted = append(s.mounted, l)
	}
	return nil
}

// isMounted reports whether the built-in library id is mounted.
func (s *builtinSet) isMounted(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, l := range s.mounted {
		if l.id == id {
			return true
		}
	}
	return false
}

// libraryOf returns the built-in library that defines a tool, "" when
// none does.
func (s *builtinSet) libraryOf(name string) string {
	for _, id := range builtinIDs {
		if l, err := s.lib(id); err == nil && slices.Contains(l.names, name) {
			return id
		}
	}
	return ""
}

func (s *builtinSet) Tools(ctx context.Context) ([]tool.Info, error) {
	s.mu.RLock()
	libs := append([]*builtinLib(nil), s.mounted...)
	s.mu.RUnlock()
	var out []tool.Info
	for _, l := range libs {
		infos, err := l.ts.Tools(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, infos...)
	}
	return out, nil
}

func (s *builtinSet) Handler(ctx context.Context, name string) (tool.Handler, error) {
	s.mu.RLock()
	libs := append([]*builtinLib(nil), s.mounted...)
	s.mu.RUnlock()
	for _, l := range libs {
		if slices.Contains(l.names, name) {
			return l.ts.Handler(ctx, name)
		}
	}
	return nil, &tool.UnknownToolError{Name: name}
}

func (s *builtinSet) Close() error {
	s.mu.Lock()
	s.closed = true
	built := s.built
	s.built, s.mounted = nil, nil
	s.mu.Unlock()
	var errs []error
	for _, l := range built {
		errs = append(errs, l.ts.Close())
	}
	return errors.Join(errs...)
}

// defaultPythonFolders returns the folder of the built-in Python default
// library (the seeds' example libraries), extracted on demand.
func defaultPythonFolders() ([]string, error) {
	dir, err := pylib.Dir()
	if err != nil {
		return nil, err
	}
	return []string{dir}, nil
}

// optionalPythonFolders returns the folder of the optional built-in Python
// libraries (mcp_bridge), which are mounted by name.
func optionalPythonFolders() ([]string, error) {
	dir, err := pylib.OptionalDir()
	if err != nil {
		return nil, err
	}
	return []string{dir}, nil
}

// configuredOptional returns the optional built-in Python libraries that
// the host configuration configures: they join the built-in default
// library (mcp_bridge with host_tool_configs["mcp_bridge"]).
func configuredOptional(configs map[string]map[string]any) []string {
	var out []string
	for _, name := range pylib.Optional {
		if _, ok := configs[name]; ok {
			out = append(out, name)
		}
	}
	return out
}
