package lcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lcptools/lcp/internal/editdist"
)

// bindingKeys are the keys ParseBindingConfig reads.
var bindingKeys = []string{"tools_folders", "tools_folder_path", "tool_files", "host_tool_configs"}

// ParseBindingConfig reads the JSON form of the LCP binding's
// configuration (the seeds' tools_binding_config) into a Config:
//
//	{"tools_folders": ["./my_tools"], "tool_files": "extra.py",
//	 "host_tool_configs": {"system_shell": {"autonomy_level": "safe"}}}
//
// tools_folders and tool_files take one path or a list of paths;
// tools_folder_path is the seeds' other name of tools_folders (giving
// both is an error, unless they say the same). Handlers
// (confirm_handler...) are Go functions, set on the Config or with
// SetConfirmHandler, never in JSON. An unknown key, or a value of the
// wrong type, is an error that names it.
func ParseBindingConfig(data []byte) (*Config, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("binding config: want a JSON object of %s", strings.Join(bindingKeys, ", "))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("binding config: %w", err)
	}
	for k := range fields {
		if !slices.Contains(bindingKeys, k) {
			return nil, fmt.Errorf("binding config: unknown key %q%s (the keys: %s)", k, nearestKey(k), strings.Join(bindingKeys, ", "))
		}
	}
	cfg := &Config{}
	folders, err := pathList(fields, "tools_folders")
	if err != nil {
		return nil, err
	}
	alias, err := pathList(fields, "tools_folder_path")
	if err != nil {
		return nil, err
	}
	if folders != nil && alias != nil && !slices.Equal(folders, alias) {
		return nil, fmt.Errorf("binding config: tools_folders and tools_folder_path (its other name) say different things: give one")
	}
	if folders == nil {
		folders = alias
	}
	cfg.ToolsFolders = folders
	if cfg.ToolFiles, err = pathList(fields, "tool_files"); err != nil {
		return nil, err
	}
	if raw, ok := fields["host_tool_configs"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &cfg.HostToolConfigs); err != nil {
			return nil, fmt.Errorf("binding config: host_tool_configs must be an object of objects keyed by library stem")
		}
	}
	return cfg, nil
}

// pathList reads key as one path or a list of paths; nil when absent or
// null.
func pathList(fields map[string]json.RawMessage, key string) ([]string, error) {
	raw, ok := fields[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, fmt.Errorf("binding config: %s is an empty path", key)
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("binding config: %s must be a path or a list of paths", key)
	}
	for i, p := range many {
		if p == "" {
			return nil, fmt.Errorf("binding config: %s[%d] is an empty path", key, i)
		}
	}
	return many, nil
}

// nearestKey is " (did you mean K?)" for the key nearest to k, if any is
// near.
func nearestKey(k string) string {
	best, bestD := "", 4
	for _, c := range bindingKeys {
		if d := editdist.Levenshtein(k, c, bestD); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}
