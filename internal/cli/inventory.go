package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/mcp"
	"github.com/spf13/pflag"
)

// inventoryFlags are the flags of every command that builds an inventory.
type inventoryFlags struct {
	tools      []string
	files      []string
	hostConfig string
	workspace  string
	python     string
	timeout    time.Duration
	noCoerce   bool
	llm        string
	mcpConfig  string
	sandbox    bool
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

func (f *inventoryFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.tools, "tools", nil, "a tools `folder` to scan (repeatable; default: the built-in library)")
	fs.StringArrayVar(&f.files, "file", nil, "a single tool `file` to load (repeatable)")
	fs.StringVar(&f.hostConfig, "host-config", "", "JSON `file` of host_tool_configs, keyed by library stem")
	fs.StringVar(&f.workspace, "workspace", "", "working `directory` of tool calls (default: the current directory)")
	fs.StringVar(&f.python, "python", "", "Python `interpreter` for Python tools (default: python3 on PATH)")
	fs.DurationVar(&f.timeout, "timeout", 0, "time limit of each call, e.g. 30s (default: none)")
	fs.BoolVar(&f.noCoerce, "no-coerce", false, "pass string arguments to Python tools as given, without coercion")
	fs.StringVar(&f.mcpConfig, "mcp-config", "", "JSON `file` of MCP servers whose tools join the inventory as <alias>::<tool> (the mcpServers shape of desktop clients, or a list)")
	fs.BoolVar(&f.sandbox, "sandbox", false, "run every Python tool library in the kernel sandbox (workspace writable, .git read-only, no network unless configured)")
	fs.StringVar(&f.llm, "llm", "", "OpenAI-compatible `endpoint` (BASE_URL[#MODEL]) that Python tools reach through lollms_client_instance.generate_text; key from $LCP_API_KEY or $OPENAI_API_KEY")
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
		Sandbox:      f.sandbox,
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
	if f.mcpConfig != "" {
		servers, err := mcp.LoadConfig(f.mcpConfig)
		if err != nil {
			return nil, usagef("--mcp-config: %v", err)
		}
		cfg.MCPServers = servers
	}
	if f.llm != "" {
		base, model, err := llm.ParseEndpoint(f.llm)
		if err != nil {
			return nil, usagef("--llm: %v", err)
		}
		cfg.LLM = &llm.Client{BaseURL: base, Model: model, APIKey: llm.APIKeyFromEnv(f.lookupEnv())}
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

// engine builds the engine; adjust may change the configuration first.
func (f *inventoryFlags) engine(ctx context.Context, adjust func(*lcp.Config)) (*lcp.Engine, error) {
	cfg, err := f.config()
	if err != nil {
		return nil, err
	}
	if adjust != nil {
		adjust(cfg)
	}
	eng, err := lcp.New(ctx, cfg)
	if err != nil {
		return nil, &usageError{fmt.Errorf("%w", err)}
	}
	return eng, nil
}
