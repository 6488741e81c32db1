package binding

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcptools/lcp/internal/jsontest"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

func needPython(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// TestExecConformance runs every execution case (testdata/exec, copied from
// shared/conformance/exec) through real Python workers: the calls of a case
// in order, against one binding, in one fresh empty workspace.
func TestExecConformance(t *testing.T) {
	needPython(t)
	dirs, err := filepath.Glob("testdata/exec/*")
	if err != nil || len(dirs) < 30 {
		t.Fatalf("cases: %d %v", len(dirs), err)
	}
	pool := worker.NewPool(&worker.Options{StartTimeout: startTimeout})
	t.Cleanup(func() { pool.Close() })
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			runExecCase(t, pool, dir)
		})
	}
}

func runExecCase(t *testing.T, pool *worker.Pool, dir string) {
	opts := &Options{Folders: []string{dir}, Workspace: t.TempDir(), Pool: pool, CallTimeout: 60 * time.Second}
	if raw, err := os.ReadFile(filepath.Join(dir, "host_config.json")); err == nil {
		if err := json.Unmarshal(raw, &opts.HostConfigs); err != nil {
			t.Fatal(err)
		}
	}
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	data, err := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c struct {
			Tool   string          `json:"tool"`
			Args   json.RawMessage `json:"args"`
			Expect json.RawMessage `json:"expect"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		res, err := tool.Call(context.Background(), b, c.Tool, c.Args, nil)
		if err != nil {
			res = tool.ErrorResult(err)
		}
		got, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var want struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(c.Expect, &want)
		rules := jsontest.ResultRules{
			ErrorContains: strings.HasPrefix(want.Error, "Error loading tool library"),
			ErrorNonEmpty: strings.Contains(want.Error, "is not defined at module level"),
		}
		if rules.ErrorContains {
			// Only the "<Type>: <message>" part has to match.
			if i := strings.Index(want.Error, "': "); i >= 0 {
				part := want.Error[i+3:]
				var m map[string]any
				_ = json.Unmarshal(c.Expect, &m)
				m["error"], m["output"] = part, part
				c.Expect, _ = json.Marshal(m)
			}
		}
		for _, d := range jsontest.CompareResult(got, c.Expect, rules) {
			t.Errorf("line %d: %s(%s): %s\n got  %s\n want %s", i+1, c.Tool, c.Args, d, got, c.Expect)
		}
	}
}
