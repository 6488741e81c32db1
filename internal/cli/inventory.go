package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/autonomy"
	"github.com/lcptools/lcp/binding"
	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/builtin/pylib"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/sandbox"
	"github.com/spf13/pflag"
)

// inventoryFlags are the flags of every command that builds an inventory.
type inventoryFlags struct {
	tools      []string
	files      []string
	hostConfig string
	autonomy   string
	workspace  string
	python     string
	timeout    time.Duration
	noCoerce   bool
	llm        string
	tti        string
	tts        string
	stt        string
	modelCfg   string
	mcpConfig  string
	mcpServers []string
	// status receives the start-up progress of MCP servers (the
	// command's stderr); nil says nothing.
	status   io.Writer
	mounts   []string
	builtins bool
	precise  bool
	validate bool
	sandbox  bool
	// The budget of every sandboxed run (--sandbox-memory-mb, ...).
	budgetMemoryMB, budgetDiskMB, budgetProcesses int
	budgetTime                                    time.Duration
	flags                                         *pflag.FlagSet // what register was given, to tell a flag given as 0
	// pathsAsFindings: a missing --tools folder or --file is a finding
	// of lcp check (an error) rather than a usage error.
	pathsAsFindings bool
	// getenv reads the environment (the API key of --llm); nil means
	// os.Getenv.
	getenv func(string) string
}

func (f *inventoryFlags) lookupEnv() func(string) string {
	if f.getenv != nil {
		return f.getenv
	}
	return os.Getenv
}

// inventoryUse says which inventory flags a command has: each command
// lists only the flags it uses.
type inventoryUse int

const (
	// readsTools: the flags that say what the inventory is (lcp check,
	// which runs nothing).
	readsTools inventoryUse = iota
	// loadsTools: those, and the ones that matter when Python modules
	// are loaded (lcp list --dynamic runs prompt functions).
	loadsTools
	// runsTools: every flag (the commands that run calls).
	runsTools
)

func (f *inventoryFlags) register(fs *pflag.FlagSet, use inventoryUse) {
	f.flags = fs
	fs.StringArrayVar(&f.tools, "tools", nil, "a tools `folder` to scan (repeatable; default: the built-in library)")
	fs.StringArrayVar(&f.files, "file", nil, "a single tool `file` to load (repeatable)")
	fs.StringArrayVar(&f.mounts, "mount", nil, "mount a tool `library` by name beside the others: from the tools folders, else the built-in library (workspace_tools, system_shell, execute_python, user_interactive_tools...; repeatable)")
	fs.BoolVar(&f.builtins, "builtins", false, "add the whole built-in library beside --tools and --file")
	fs.StringVar(&f.mcpConfig, "mcp-config", "", "JSON `file` of MCP servers whose tools join the inventory as <alias>::<tool> (the mcpServers shape of desktop clients, or a list)")
	fs.StringArrayVar(&f.mcpServers, "mcp-server", nil, "one MCP server without a config file: a `command` line ('npx -y @modelcontextprotocol/server-everything') or an http(s) URL, optionally as alias=...; its tools join as <alias>::<tool> (repeatable)")
	fs.StringVar(&f.hostConfig, "host-config", "", "JSON `file` of host_tool_configs, keyed by library stem")
	fs.StringVar(&f.autonomy, "autonomy", "", "autonomy `level` of the built-in libraries: strict, safe (the default) or full_access; a library's autonomy_level in --host-config wins")
	fs.BoolVar(&f.precise, "precise", false, "precise schemas from Python annotations (Literal -> enum, list[int] -> array of integers, Optional -> not required); default: the LCP rule")
	if use < loadsTools {
		return
	}
	fs.StringVar(&f.workspace, "workspace", "", "working `directory` of tool calls (default: the current directory)")
	fs.StringVar(&f.python, "python", "", "Python `interpreter` for Python tools (default: python3 on PATH)")
	fs.BoolVar(&f.sandbox, "sandbox", false, "run every Python tool library in the kernel sandbox (workspace writable, .git read-only, no network unless configured)")
	fs.IntVar(&f.budgetMemoryMB, "sandbox-memory-mb", 0, "memory `MiB` of each sandboxed run as a whole: processes, tmpfs, shared memory, memfd, its copy-on-write layer (default 2048; a library's sandbox_run_memory_mb wins)")
	fs.IntVar(&f.budgetDiskMB, "sandbox-disk-mb", 0, "`MiB` of new and changed files of each copy-on-write sandboxed run (default 1024; a library's sandbox_disk_mb wins)")
	fs.IntVar(&f.budgetProcesses, "sandbox-processes", 0, "processes and threads of each sandboxed run at once (default 1024; a library's sandbox_processes wins)")
	fs.DurationVar(&f.budgetTime, "sandbox-time", 0, "wall time of each sandboxed run, e.g. 10m (default: none beyond the tools' own time limit; a library's sandbox_time_seconds wins)")
	if use < runsTools {
		return
	}
	fs.DurationVar(&f.timeout, "timeout", 0, "time limit of each call, e.g. 30s (default: none)")
	fs.BoolVar(&f.noCoerce, "no-coerce", false, "pass string arguments to Python tools as given, without coercion")
	fs.BoolVar(&f.validate, "validate-args", false, "check the arguments of Python tool calls against their schemas (400 listing each violation); default: as the LCP reference, no check")
	fs.StringVar(&f.llm, "llm", "", "OpenAI-compatible `endpoint` (BASE_URL[#MODEL]) that Python tools reach through lollms_client_instance.generate_text; key from $LCP_API_KEY or $OPENAI_API_KEY")
	fs.StringVar(&f.tti, "tti", "", "OpenAI-compatible `endpoint` (BASE_URL[#MODEL]) of the image model of lollms_client_instance.generate_image (/images/generations)")
	fs.StringVar(&f.tts, "tts", "", "OpenAI-compatible `endpoint` (BASE_URL[#MODEL]) of the speech model of lollms_client_instance.generate_audio (/audio/speech)")
	fs.StringVar(&f.stt, "stt", "", "OpenAI-compatible `endpoint` (BASE_URL[#MODEL]) of the transcription model of lollms_client_instance.transcribe_audio (/audio/transcriptions)")
	fs.StringVar(&f.modelCfg, "model-config", "", "JSON `file` of model profiles per modality (llm, tti, tts, stt) that tools switch between; after --llm, --tti, --tts and --stt")
}

// builtinLibraries are the libraries --autonomy sets the level of: the Go
// built-ins and the built-in Python libraries.
func builtinLibraries() []string {
	var ids []string
	for _, l := range builtin.Libraries() {
		ids = append(ids, l.ID)
	}
	return append(ids, pylib.Libraries...)
}

// applyAutonomy sets level as the autonomy_level of every built-in
// library whose host configuration has none.
func applyAutonomy(configs map[string]map[string]any, level autonomy.Level) map[string]map[string]any {
	if configs == nil {
		configs = map[string]map[string]any{}
	}
	for _, id := range builtinLibraries() {
		cfg := configs[id]
		if cfg == nil {
			cfg = map[string]any{}
			configs[id] = cfg
		}
		if _, set := cfg[autonomy.Key]; !set {
			cfg[autonomy.Key] = string(level)
		}
	}
	return configs
}

// config builds the engine configuration the flags describe.
func (f *inventoryFlags) config() (*lcp.Config, error) {
	cfg := &lcp.Config{
		ToolsFolders: f.tools,
		ToolFiles:    f.files,
		Workspace:    f.workspace,
		Python:       f.python,
		CallTimeout:  f.timeout,
		NoCoercion:   f.noCoerce,
		Mount:        f.mounts,
		Builtins:     f.builtins,
		PreciseTypes: f.precise,

		ValidateArguments: f.validate,
		Sandbox:           f.sandbox,
	}
	if s := f.lookupEnv()("LCP_PROMPT_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, usagef("LCP_PROMPT_TIMEOUT=%q: want a positive duration such as 30s", s)
		}
		cfg.PromptTimeout = d
	}
	if !f.pathsAsFindings {
		if err := f.checkPaths(); err != nil {
			return nil, err
		}
	}
	if f.hostConfig != "" {
		raw, err := os.ReadFile(f.hostConfig)
		if err != nil {
			return nil, usagef("--host-config: %v", err)
		}
		if err := json.Unmarshal(raw, &cfg.HostToolConfigs); err != nil {
			return nil, usagef("--host-config %s: not a JSON object of objects keyed by library stem: %v", f.hostConfig, err)
		}
	}
	if f.autonomy != "" {
		level, err := autonomy.Parse(f.autonomy)
		if err != nil {
			return nil, usagef("--autonomy: %v", err)
		}
		cfg.HostToolConfigs = applyAutonomy(cfg.HostToolConfigs, level)
	}
	if err := f.budget(cfg); err != nil {
		return nil, err
	}
	if f.mcpConfig != "" {
		servers, err := mcp.LoadConfig(f.mcpConfig)
		if err != nil {
			return nil, usagef("--mcp-config: %v", err)
		}
		cfg.MCPServers = servers
	}
	if len(f.mcpServers) > 0 {
		servers, err := serverFlags(f.mcpServers, cfg.MCPServers)
		if err != nil {
			return nil, err
		}
		cfg.MCPServers = append(cfg.MCPServers, servers...)
	}
	if err := f.models(cfg); err != nil {
		return nil, err
	}
	if f.workspace != "" {
		st, err := os.Stat(f.workspace)
		if err != nil {
			return nil, usagef("--workspace: %v", err)
		}
		if !st.IsDir() {
			return nil, usagef("--workspace %s is not a directory", f.workspace)
		}
	}
	return cfg, nil
}

// checkPaths fails, naming the flag and the path, when a --tools folder
// or a --file does not exist: an empty inventory would otherwise pass
// for a folder without tools (lcp list printing "No tools found." and
// exiting 0 in CI).
func (f *inventoryFlags) checkPaths() error {
	for _, dir := range f.tools {
		st, err := os.Stat(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return usagef("--tools %s: no such folder", dir)
		case err != nil:
			return usagef("--tools %s: %w", dir, err)
		case !st.IsDir():
			return usagef("--tools %s: not a folder (use --file for a single tool file)", dir)
		}
	}
	for _, file := range f.files {
		st, err := os.Stat(file)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return usagef("--file %s: no such file", file)
		case err != nil:
			return usagef("--file %s: %w", file, err)
		case st.IsDir():
			return usagef("--file %s: a folder (use --tools for a tools folder)", file)
		}
	}
	return nil
}

// models sets the models of the modalities: the endpoint of each flag
// first (the default), then the profiles of --model-config.
func (f *inventoryFlags) models(cfg *lcp.Config) error {
	getenv := f.lookupEnv()
	file := &llm.Modalities{}
	if f.modelCfg != "" {
		m, err := llm.LoadModalities(f.modelCfg, getenv)
		if err != nil {
			return usagef("--model-config: %v", err)
		}
		file = m
	}
	route := func(flag, endpoint string, profiles []llm.Profile) (llm.Endpoint, error) {
		var all []llm.Profile
		if endpoint != "" {
			c, err := llm.NewProfileClient(endpoint, getenv)
			if err != nil {
				return nil, usagef("--%s: %v", flag, err)
			}
			all = append(all, llm.Profile{Alias: c.Model, Client: c})
		}
		for _, p := range profiles {
			if p.Alias != "" && len(all) > 0 && all[0].Alias == p.Alias {
				return nil, usagef("--model-config: the %s alias %q is the model of --%s already", flag, p.Alias, flag)
			}
			all = append(all, p)
		}
		return llm.Route(all), nil
	}
	var err error
	var ep [4]llm.Endpoint
	for i, m := range []struct {
		flag, endpoint string
		profiles       []llm.Profile
	}{{"llm", f.llm, file.LLM}, {"tti", f.tti, file.TTI}, {"tts", f.tts, file.TTS}, {"stt", f.stt, file.STT}} {
		if ep[i], err = route(m.flag, m.endpoint, m.profiles); err != nil {
			return err
		}
	}
	cfg.LLM, cfg.TTI, cfg.TTS, cfg.STT = ep[0], ep[1], ep[2], ep[3]
	return nil
}

// engine builds the engine; adjust may change the configuration first.
func (f *inventoryFlags) engine(ctx context.Context, adjust func(*lcp.Config)) (*lcp.Engine, error) {
	cfg, err := f.config()
	if err != nil {
		return nil, err
	}
	if f.status != nil && len(cfg.MCPServers) > 0 {
		cfg.OnMCPStart = startNotes(f.status)
	}
	if adjust != nil {
		adjust(cfg)
	}
	eng, err := lcp.New(ctx, cfg)
	if errors.Is(err, binding.ErrLibraryNotFound) {
		for _, m := range f.mounts {
			if strings.Contains(err.Error(), strconv.Quote(m)) {
				return nil, usagef("--mount: no tool library %q in the tools folders or the built-in library.%s", m, didYouMean(suggest(m, f.mountable())))
			}
		}
		return nil, usagef("--mount: %v", err)
	}
	if err != nil {
		return nil, &usageError{fmt.Errorf("%w", err)}
	}
	return eng, nil
}

// mountable lists the libraries --mount could name, for suggestions: the
// built-in ones and the files and folders of the tools folders.
func (f *inventoryFlags) mountable() []string {
	names := builtinLibraries()
	for _, dir := range f.tools {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if n := strings.TrimSuffix(e.Name(), ".py"); !strings.HasPrefix(n, ".") && (e.IsDir() || n != e.Name()) {
				names = append(names, n)
			}
		}
	}
	return names
}

// watchFlags are the flags of the commands that can reload their tools.
type watchFlags struct {
	watch bool
}

func (w *watchFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&w.watch, "watch", false, "re-read the tool files when they change (hot reload)")
}

// changeRelay hands the engine's reload notices to the front ends, which
// are made after the engine.
type changeRelay struct {
	mu  sync.Mutex
	fns []func(lcp.Change)
}

func (r *changeRelay) add(f func(lcp.Change)) {
	r.mu.Lock()
	r.fns = append(r.fns, f)
	r.mu.Unlock()
}

func (r *changeRelay) notify(c lcp.Change) {
	r.mu.Lock()
	fns := slices.Clone(r.fns)
	r.mu.Unlock()
	for _, f := range fns {
		f(c)
	}
}

// configure makes the engine watch its files when --watch says so.
func (w *watchFlags) configure(cfg *lcp.Config, relay *changeRelay) {
	if !w.watch {
		return
	}
	cfg.Watch = true
	cfg.OnChange = relay.notify
}

// describeChange says in one line what a reload changed.
func describeChange(c lcp.Change) string {
	var parts []string
	list := func(sign string, names []string) {
		if len(names) == 0 {
			return
		}
		shown := names
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(names)-5))
		}
		parts = append(parts, sign+strings.Join(shown, ", "+sign))
	}
	list("+", c.Added)
	list("-", c.Removed)
	list("~", c.Changed)
	if len(parts) == 0 {
		if c.Diagnostics {
			return "the diagnostics changed (lcp check tells more)"
		}
		return fmt.Sprintf("%d file(s) changed, same tools", len(c.Files))
	}
	return strings.Join(parts, " ")
}

// budget checks the budget flags and puts them in the configuration: a
// value that is not a positive number is a usage error naming the flag
// (pflag refuses what is not a number at all).
func (f *inventoryFlags) budget(cfg *lcp.Config) error {
	for _, fl := range []struct {
		name string
		v    int64
		show string
	}{{"--sandbox-memory-mb", int64(f.budgetMemoryMB), strconv.Itoa(f.budgetMemoryMB)},
		{"--sandbox-disk-mb", int64(f.budgetDiskMB), strconv.Itoa(f.budgetDiskMB)},
		{"--sandbox-processes", int64(f.budgetProcesses), strconv.Itoa(f.budgetProcesses)},
		{"--sandbox-time", int64(f.budgetTime), f.budgetTime.String()}} {
		given := f.flags != nil && f.flags.Changed(strings.TrimPrefix(fl.name, "--"))
		if fl.v < 0 || fl.v == 0 && given {
			return usagef("%s: %s is not allowed; want a positive value (leave the flag out for the default)", fl.name, fl.show)
		}
	}
	if f.budgetMemoryMB > 1<<30 || f.budgetDiskMB > 1<<30 {
		return usagef("--sandbox-memory-mb, --sandbox-disk-mb: at most %d MiB", 1<<30)
	}
	cfg.SandboxBudget = sandbox.Limits{TotalMemory: int64(f.budgetMemoryMB) << 20, Disk: int64(f.budgetDiskMB) << 20,
		Processes: f.budgetProcesses, WallTime: f.budgetTime}
	return nil
}
