package cli

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/tool"
)

// Shell completion (lcp completion bash|zsh|fish|powershell, from cobra)
// completes tool names, parameter names, library names and the values of
// the flags that take a word from a list. What it lists comes from the
// inventory the command line describes, read statically: completing
// never starts Python, an MCP server or a sandbox.

// completionTimeout bounds the reading of the inventory for a completion.
const completionTimeout = 3 * time.Second

// fixedValues completes a flag from a list of words.
func fixedValues(words ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return words, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeWith registers the completion of a flag when the command has it.
func completeWith(cmd *cobra.Command, flag string, f func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)) {
	if cmd.Flags().Lookup(flag) != nil {
		_ = cmd.RegisterFlagCompletionFunc(flag, f) // registered once per flag
	}
}

// registerCompletions adds the completions of the inventory flags and of
// the usual word flags to a command.
func registerCompletions(cmd *cobra.Command, inv *inventoryFlags) {
	dirs := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	ext := func(e ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return e, cobra.ShellCompDirectiveFilterFileExt
		}
	}
	completeWith(cmd, "tools", dirs)
	completeWith(cmd, "workspace", dirs)
	completeWith(cmd, "dir", dirs)
	completeWith(cmd, "file", ext("py"))
	completeWith(cmd, "host-config", ext("json"))
	completeWith(cmd, "mcp-config", ext("json"))
	completeWith(cmd, "autonomy", fixedValues("strict", "safe", "full_access"))
	completeWith(cmd, "approve", fixedValues("ask", "allow", "reject"))
	completeWith(cmd, "log-format", fixedValues("text", "json"))
	completeWith(cmd, "fail-on", fixedValues("error", "warning", "info", "none"))
	completeWith(cmd, "scope", fixedValues("user", "project"))
	if inv != nil {
		completeWith(cmd, "mount", func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			return libraryNames(cmd.Context(), inv), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// staticEngine builds the inventory the flags describe for a completion:
// no MCP server is started, no prompt function runs, and Python runs
// only when a call does, which a completion never makes.
func staticEngine(ctx context.Context, inv *inventoryFlags) (*lcp.Engine, context.CancelFunc, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	f := *inv
	f.mcpConfig, f.llm = "", ""
	eng, err := f.engine(ctx, func(c *lcp.Config) {
		c.DynamicPrompts, c.Watch, c.MCPServers = false, false, nil
	})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return eng, cancel, nil
}

// toolInfos lists the inventory's tools for a completion, nil on any
// error (a completion stays silent).
func toolInfos(ctx context.Context, inv *inventoryFlags) []tool.Info {
	eng, cancel, err := staticEngine(ctx, inv)
	if err != nil {
		return nil
	}
	defer cancel()
	defer eng.Close()
	infos, _ := eng.Tools(ctx)
	return infos
}

// libraryNames lists the libraries --mount can name: the built-in ones
// and those of the tools folders.
func libraryNames(ctx context.Context, inv *inventoryFlags) []string {
	names := builtinLibraries()
	eng, cancel, err := staticEngine(ctx, inv)
	if err == nil {
		defer cancel()
		defer eng.Close()
		libs, _ := eng.Libraries(ctx)
		for _, l := range libs {
			if !slices.Contains(names, l.ID) {
				names = append(names, l.ID)
			}
		}
	}
	return names
}

// completeCall completes lcp call's arguments: the tool name first (with
// its description), then its parameters as key= (without a space after).
func completeCall(inv *inventoryFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if cmd.Flags().Changed("batch") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		infos := toolInfos(cmd.Context(), inv)
		if len(args) == 0 {
			var out []string
			for _, in := range infos {
				out = append(out, in.Name+"\t"+firstLine(in.Description, 60))
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		if strings.Contains(toComplete, "=") {
			return nil, cobra.ShellCompDirectiveDefault // a value: files, say
		}
		for _, in := range infos {
			if in.Name != args[0] {
				continue
			}
			var s struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			}
			_ = json.Unmarshal(in.InputSchema, &s)
			keys, _ := orderedKeys(propertiesOf(in.InputSchema))
			var out []string
			for _, k := range keys {
				if given(args[1:], k) {
					continue
				}
				out = append(out, k+"=\t"+firstLine(s.Properties[k].Description, 60))
			}
			return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// propertiesOf is the "properties" object of a schema, in its order.
func propertiesOf(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return json.RawMessage(`{}`)
	}
	return s.Properties
}

// given reports whether key=... is among the arguments already typed.
func given(args []string, key string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, key+"=") {
			return true
		}
	}
	return false
}
