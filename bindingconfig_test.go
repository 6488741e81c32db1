package lcp_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lcptools/lcp"
)

func TestParseBindingConfig(t *testing.T) {
	tests := []struct {
		in      string
		folders []string
		files   []string
		err     string
	}{
		{in: `{"tools_folders": ["./a", "./b"], "tool_files": "x.py"}`, folders: []string{"./a", "./b"}, files: []string{"x.py"}},
		{in: `{"tools_folder_path": "./my_tools"}`, folders: []string{"./my_tools"}},
		{in: `{"tools_folders": "./t", "tools_folder_path": ["./t"]}`, folders: []string{"./t"}},
		{in: `{"host_tool_configs": {"system_shell": {"autonomy_level": "safe"}}}`},
		{in: `{}`},
		{in: `{"tools_folders": "./a", "tools_folder_path": "./b"}`, err: "say different things"},
		{in: `{"tools_folder": "./a"}`, err: `unknown key "tools_folder" (did you mean tools_folders?)`},
		{in: `{"tool_files": 3}`, err: "tool_files must be a path or a list of paths"},
		{in: `{"tools_folders": [""]}`, err: "tools_folders[0] is an empty path"},
		{in: `{"host_tool_configs": []}`, err: "host_tool_configs must be an object"},
		{in: `["./a"]`, err: "want a JSON object"},
		{in: `{"tools_folders": `, err: "binding config"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			cfg, err := lcp.ParseBindingConfig([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.ToolsFolders, tt.folders) || !slices.Equal(cfg.ToolFiles, tt.files) {
				t.Errorf("folders %q files %q", cfg.ToolsFolders, cfg.ToolFiles)
			}
		})
	}
	cfg, _ := lcp.ParseBindingConfig([]byte(`{"host_tool_configs": {"system_shell": {"autonomy_level": "safe"}}}`))
	if cfg.HostToolConfigs["system_shell"]["autonomy_level"] != "safe" {
		t.Errorf("host_tool_configs %v", cfg.HostToolConfigs)
	}
}

func FuzzParseBindingConfig(f *testing.F) {
	for _, s := range []string{`{"tools_folders": ["a"]}`, `{"tools_folder_path": "a", "tool_files": ["b"]}`, `{"host_tool_configs": {"x": {}}}`, `{`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := lcp.ParseBindingConfig(data)
		if err == nil && cfg == nil {
			t.Fatal("no config and no error")
		}
	})
}

func ExampleParseBindingConfig() {
	cfg, err := lcp.ParseBindingConfig([]byte(`{"tools_folder_path": "./my_tools", "host_tool_configs": {"system_shell": {"autonomy_level": "strict"}}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.ToolsFolders, cfg.HostToolConfigs["system_shell"]["autonomy_level"])
	// Output: [./my_tools] strict
}
