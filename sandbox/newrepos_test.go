package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDisableConfig(t *testing.T) {
	tests := []struct {
		name, in, line string
		keep           []gitVar
	}{
		{"nothing to disable", "[user]\n\tname = A\n", "", nil},
		{"program and quoting kept", "[core]\n\tfsmonitor = ./m\n\tbare = false\n[remote \"o\\\"r\"]\n\turl = \"a\\\\b # c\\td\"\n",
			"config disabled: core.fsmonitor",
			[]gitVar{{Section: "core", Key: "bare", Value: "false"}, {Section: "remote", Sub: `o"r`, Key: "url", Value: "a\\b # c\td"}}},
		{"hooks path and include", "[core]\n\thooksPath = h\n[include]\n\tpath = x.inc\n[alias]\n\tst = status\n",
			"config disabled: core.hookspath, include.path, alias.st", nil},
		{"unparsable", "[core\n", "config disabled: a configuration lcp cannot parse", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			cfg := filepath.Join(ws, "config")
			writeTestFile(t, cfg, tt.in)
			line, err := disableConfig(ws, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(line, tt.line) {
				t.Fatalf("line = %q, want prefix %q", line, tt.line)
			}
			if tt.line == "" {
				return
			}
			if b, err := os.ReadFile(cfg + disabledSuffix); err != nil || string(b) != tt.in {
				t.Errorf("moved aside: %q, %v", b, err)
			}
			b, _ := os.ReadFile(cfg)
			got, err := parseGitConfig(b)
			if err != nil {
				t.Fatalf("written back %q: %v", b, err)
			}
			for i := range got {
				got[i].Line = 0
			}
			if len(got) != 0 || len(tt.keep) != 0 {
				if !reflect.DeepEqual(got, tt.keep) {
					t.Errorf("kept %+v, want %+v", got, tt.keep)
				}
			}
		})
	}
}
