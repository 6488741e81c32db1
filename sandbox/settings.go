package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lcptools/lcp/egress"
)

// The keys of a library's host configuration (host_tool_configs[lib])
// that configure its sandbox.
const (
	// KeySandbox: for the built-in system_shell and execute_python, "on"
	// (the default in strict and safe) or "off"; for Python tool
	// libraries, "off" (the default), "workspace-write" or "read-only".
	// true means "on" / "workspace-write", false "off".
	KeySandbox = "sandbox"
	// KeyNetwork: true keeps the host's network in the library's
	// sandboxed runs; a list of host patterns (host, host:port, *.domain)
	// lets them reach those hosts through lcp's egress proxy, and in safe
	// and strict puts any other host to the person.
	KeyNetwork = "network"
	// KeyReadPaths, KeyWritePaths: more host paths shown read-only or
	// read-write ("~/" is the home folder).
	KeyReadPaths  = "sandbox_read_paths"
	KeyWritePaths = "sandbox_write_paths"
	// KeyCaches replaces the default list of caches shown over a
	// throwaway layer (DefaultCaches).
	KeyCaches = "sandbox_caches"
	// KeyEnv names more environment variables passed through (never one
	// that looks like a secret).
	KeyEnv = "sandbox_env"
	// The limits: memory per process and file size in MiB, processes,
	// CPU seconds per process, private /tmp in MiB.
	KeyMemoryMB   = "sandbox_memory_mb"
	KeyProcesses  = "sandbox_processes"
	KeyFileSizeMB = "sandbox_file_size_mb"
	KeyCPUSeconds = "sandbox_cpu_seconds"
	KeyTmpMB      = "sandbox_tmp_mb"
	// The run's budget: memory of the whole run and disk of its
	// copy-on-write layer in MiB, wall time in seconds (processes is
	// KeyProcesses). Only the host sets them: no tool argument does.
	KeyRunMemoryMB = "sandbox_run_memory_mb"
	KeyDiskMB      = "sandbox_disk_mb"
	KeyTimeSeconds = "sandbox_time_seconds"
)

// maxSetting bounds every numeric setting (in its own unit: MiB,
// seconds, processes), far above any machine, so that a converted value
// never overflows into a negative one, which would mean "no limit".
const maxSetting = 1 << 30

// Setting values of KeySandbox.
const (
	SettingOn             = "on"
	SettingOff            = "off"
	SettingWorkspaceWrite = "workspace-write"
	SettingReadOnly       = "read-only"
)

// Settings are a library's sandbox settings, read from its host
// configuration by ReadSettings.
type Settings struct {
	// Setting is the value of KeySandbox ("" when absent).
	Setting string
	// Network keeps the host's network ("network": true).
	Network bool
	// Allow is the network allow-list ("network": [...]), nil when none
	// is given.
	Allow      egress.List
	ReadPaths  []string
	WritePaths []string
	// Caches is nil for the defaults.
	Caches []string
	Env    []string
	Limits Limits
}

// ReadSettings reads the sandbox keys of a library's host configuration.
// A key of the wrong type or value is an error: a typo must not weaken
// the sandbox silently.
func ReadSettings(cfg map[string]any) (Settings, error) {
	var s Settings
	var errs []error
	bad := func(key string, v any, want string) {
		errs = append(errs, fmt.Errorf("host_tool_configs: %s is %v (%T), want %s", key, v, v, want))
	}
	switch v := cfg[KeySandbox].(type) {
	case nil:
	case bool:
		s.Setting = SettingOff
		if v {
			s.Setting = SettingOn
		}
	case string:
		switch strings.ToLower(v) {
		case SettingOn, SettingOff, SettingWorkspaceWrite, SettingReadOnly:
			s.Setting = strings.ToLower(v)
		default:
			bad(KeySandbox, v, `"on", "off", "workspace-write" or "read-only"`)
		}
	default:
		bad(KeySandbox, v, "a string or a boolean")
	}
	switch v := cfg[KeyNetwork].(type) {
	case nil:
	case bool:
		s.Network = v
	case []any, []string:
		var entries []string
		ok := true
		if ss, isStrings := v.([]string); isStrings {
			entries = ss
		} else {
			for _, x := range v.([]any) {
				str, isString := x.(string)
				if !isString {
					bad(KeyNetwork, x, "a host pattern (a string)")
					ok = false
					continue
				}
				entries = append(entries, str)
			}
		}
		rules, err := egress.ParseRules(entries)
		if err != nil {
			errs = append(errs, fmt.Errorf("host_tool_configs: %s: %w", KeyNetwork, err))
		} else if ok {
			s.Allow = append(egress.List{}, rules...)
		}
	default:
		bad(KeyNetwork, v, "true, false or a list of host patterns")
	}
	strs := func(key string) []string {
		v, ok := cfg[key]
		if !ok || v == nil {
			return nil
		}
		list, isList := v.([]any)
		if !isList {
			if ss, ok := v.([]string); ok {
				return ss
			}
			bad(key, v, "a list of strings")
			return nil
		}
		var out []string
		for _, x := range list {
			str, ok := x.(string)
			if !ok {
				bad(key, x, "a string")
				continue
			}
			out = append(out, str)
		}
		return out
	}
	s.ReadPaths, s.WritePaths, s.Env = strs(KeyReadPaths), strs(KeyWritePaths), strs(KeyEnv)
	if _, ok := cfg[KeyCaches]; ok {
		s.Caches = append([]string{}, strs(KeyCaches)...)
	}
	for _, name := range s.Env {
		if IsSecretName(name) {
			errs = append(errs, fmt.Errorf("host_tool_configs: %s names %s, which looks like a secret and never reaches a sandbox", KeyEnv, name))
		}
	}
	num := func(key string) float64 {
		v, ok := cfg[key]
		if !ok || v == nil {
			return 0
		}
		var f float64
		switch n := v.(type) {
		case float64:
			f = n
		case int:
			f = float64(n)
		case int64:
			f = float64(n)
		default:
			bad(key, v, "a number")
			return 0
		}
		if !(f > 0) {
			bad(key, v, "a positive number")
			return 0
		}
		if f > maxSetting {
			bad(key, v, fmt.Sprintf("a number up to %d", maxSetting))
			return 0
		}
		return f
	}
	s.Limits = Limits{
		Memory:    int64(num(KeyMemoryMB) * (1 << 20)),
		Processes: int(num(KeyProcesses)),
		FileSize:  int64(num(KeyFileSizeMB) * (1 << 20)),
		CPUTime:   time.Duration(num(KeyCPUSeconds) * float64(time.Second)),
		TmpSize:   int64(num(KeyTmpMB) * (1 << 20)),

		TotalMemory: int64(num(KeyRunMemoryMB) * (1 << 20)),
		Disk:        int64(num(KeyDiskMB) * (1 << 20)),
		WallTime:    time.Duration(num(KeyTimeSeconds) * float64(time.Second)),
	}
	return s, errors.Join(errs...)
}

// Policy builds the policy of one run in workspace ws from the settings:
// the home folder hidden, the toolchains in it shown read-only
// (ToolPaths), the caches over throwaway layers, the environment from the
// allow-list. extraEnv (KEY=VALUE) is added as is; extraRead are more
// read-only paths (an interpreter's prefix).
func (s Settings) Policy(ws string, mode Mode, extraEnv, extraRead []string) *Policy {
	home, _ := os.UserHomeDir()
	p := &Policy{Workspace: ws, Mode: mode, Network: s.Network, Home: home, Limits: s.Limits}
	p.ReadPaths = append(ToolPaths(home), extraRead...)
	for _, r := range s.ReadPaths {
		p.ReadPaths = append(p.ReadPaths, expandHome(r, home))
	}
	for _, w := range s.WritePaths {
		p.WritePaths = append(p.WritePaths, expandHome(w, home))
	}
	if s.Caches != nil {
		for _, c := range s.Caches {
			p.Caches = append(p.Caches, expandHome(c, home))
		}
	} else {
		p.Caches = DefaultCaches(os.Getenv, home)
	}
	p.Env = append(Env(os.Environ(), home, s.Env...), extraEnv...)
	return p
}

func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	if p == "~" {
		return home
	}
	return p
}

// toolPaths are the folders of a home that hold toolchains and the
// programs they install (pyenv, nvm, rustup, go install, pip --user...):
// programs, not secrets, shown read-only so that commands find them. A
// tool whose folder also keeps credentials is shown by its program
// folders only: uv keeps its interpreters and tools next to credentials/.
var toolPaths = []string{".pyenv", ".nvm", ".volta", ".bun", ".deno", ".rbenv", ".sdkman", ".rustup",
	".cargo/bin", "go/bin", ".local/bin", ".local/lib", ".local/share/pipx",
	".local/share/uv/python", ".local/share/uv/tools", ".nix-profile"}

// ToolPaths returns the toolchain folders of home that exist.
func ToolPaths(home string) []string {
	if home == "" {
		return nil
	}
	var out []string
	for _, t := range toolPaths {
		p := filepath.Join(home, t)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// DefaultCaches returns the package and build caches that exist: Go's
// build and module caches, npm's, pip's, yarn's, pnpm's, cargo's
// registry, Maven's and Gradle's. getenv reads the variables that move
// them (GOCACHE, GOMODCACHE, GOPATH, PIP_CACHE_DIR, XDG_CACHE_HOME).
func DefaultCaches(getenv func(string) string, home string) []string {
	cacheHome := getenv("XDG_CACHE_HOME")
	if cacheHome == "" && home != "" {
		cacheHome = filepath.Join(home, ".cache")
	}
	var cands []string
	add := func(env, def string) {
		if v := getenv(env); v != "" && filepath.IsAbs(v) {
			cands = append(cands, v)
		} else if def != "" {
			cands = append(cands, def)
		}
	}
	join := func(base string, elem ...string) string {
		if base == "" {
			return ""
		}
		return filepath.Join(append([]string{base}, elem...)...)
	}
	add("GOCACHE", join(cacheHome, "go-build"))
	gopath := getenv("GOPATH")
	if gopath == "" {
		gopath = join(home, "go")
	}
	if i := strings.IndexByte(gopath, os.PathListSeparator); i >= 0 {
		gopath = gopath[:i]
	}
	add("GOMODCACHE", join(gopath, "pkg", "mod"))
	add("PIP_CACHE_DIR", join(cacheHome, "pip"))
	cands = append(cands, join(home, ".npm"), join(cacheHome, "yarn"), join(home, ".local", "share", "pnpm"),
		join(home, ".cargo", "registry"), join(home, ".m2", "repository"), join(home, ".gradle", "caches"))
	var out []string
	for _, c := range cands {
		if c == "" || slices.Contains(out, c) {
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			out = append(out, c)
		}
	}
	return out
}

// Budget returns l with its zero budget fields (TotalMemory, Disk,
// Processes, WallTime) taken from def.
func (l Limits) Budget(def Limits) Limits {
	if l.TotalMemory == 0 {
		l.TotalMemory = def.TotalMemory
	}
	if l.Disk == 0 {
		l.Disk = def.Disk
	}
	if l.Processes == 0 {
		l.Processes = def.Processes
	}
	if l.WallTime == 0 {
		l.WallTime = def.WallTime
	}
	return l
}

// ApplyBudget returns host configurations in which the libraries ids and
// every library configs names have the budget keys of def that they do
// not set themselves (positive fields of def only). configs itself is not
// changed.
func ApplyBudget(configs map[string]map[string]any, ids []string, def Limits) map[string]map[string]any {
	keys := map[string]float64{}
	if def.TotalMemory > 0 {
		keys[KeyRunMemoryMB] = float64(def.TotalMemory) / (1 << 20)
	}
	if def.Disk > 0 {
		keys[KeyDiskMB] = float64(def.Disk) / (1 << 20)
	}
	if def.Processes > 0 {
		keys[KeyProcesses] = float64(def.Processes)
	}
	if def.WallTime > 0 {
		keys[KeyTimeSeconds] = def.WallTime.Seconds()
	}
	if len(keys) == 0 {
		return configs
	}
	out := make(map[string]map[string]any, len(configs)+len(ids))
	for id, cfg := range configs {
		out[id] = cfg
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			out[id] = nil
		}
	}
	for id, cfg := range out {
		c := make(map[string]any, len(cfg)+len(keys))
		for k, v := range cfg {
			c[k] = v
		}
		for k, v := range keys {
			if _, set := c[k]; !set {
				c[k] = v
			}
		}
		out[id] = c
	}
	return out
}
