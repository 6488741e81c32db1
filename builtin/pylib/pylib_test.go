package pylib

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/lcptools/lcp/discover"
	"github.com/lcptools/lcp/pysrc"
)

func TestExtractIsContentAddressedAndConcurrent(t *testing.T) {
	parent := t.TempDir()
	var wg sync.WaitGroup
	dirs := make([]string, 16)
	errs := make([]error, 16)
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = ExtractTo(parent)
		}()
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil {
			t.Fatalf("ExtractTo: %v", errs[i])
		}
		if dirs[i] != dirs[0] {
			t.Fatalf("extractions disagree: %s and %s", dirs[i], dirs[0])
		}
	}
	if filepath.Base(dirs[0]) != hashStr() {
		t.Errorf("directory %s is not named after the content hash %s", dirs[0], hashStr())
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Errorf("parent holds %d entries, want only the extraction (no temporary leftovers)", len(entries))
	}
	if !intact(dirs[0]) {
		t.Errorf("extraction is not intact")
	}
}

func TestExtractRepairsDamage(t *testing.T) {
	parent := t.TempDir()
	dir, err := ExtractTo(parent)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "user_interaction_demo", "user_interaction_demo.py")
	if err := os.WriteFile(p, []byte("import os\nos.system('x')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := ExtractTo(parent)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := files.ReadFile("lib/user_interaction_demo/user_interaction_demo.py")
	got, _ := os.ReadFile(filepath.Join(again, "user_interaction_demo", "user_interaction_demo.py"))
	if again != dir || string(got) != string(want) {
		t.Errorf("damaged extraction not repaired")
	}
}

func TestDiscovery(t *testing.T) {
	dir, err := ExtractTo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res := discover.Run(discover.Options{Folders: []string{dir}})
	if len(res.Diagnostics()) != 0 {
		t.Errorf("diagnostics: %v", res.Diagnostics())
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Info().Library.ID+"."+tl.Name)
	}
	want := []string{"user_interaction_demo.tool_prepare_deployment",
		"user_interactive_tools.tool_configure_service_connection",
		"user_interactive_tools.tool_test_service_connection"}
	if !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	for _, lib := range Libraries {
		if _, err := os.Stat(filepath.Join(dir, lib, lib+".py")); err != nil {
			t.Errorf("library %s: %v", lib, err)
		}
	}

	// The optional libraries are beside, in a folder discovery of the
	// default one skips.
	opt := discover.Run(discover.Options{Folders: []string{filepath.Join(dir, optionalFolder)}})
	names = nil
	for _, tl := range opt.Tools {
		names = append(names, tl.Info().Library.ID+"."+tl.Name)
	}
	if want := []string{"mcp_bridge.tool_call_mcp_tool", "mcp_bridge.tool_list_mcp_tools"}; !slices.Equal(names, want) || len(opt.Diagnostics()) != 0 {
		t.Errorf("optional tools = %v (%v), want %v", names, opt.Diagnostics(), want)
	}
	for _, lib := range Optional {
		if _, err := os.Stat(filepath.Join(dir, optionalFolder, lib, lib+".py")); err != nil {
			t.Errorf("library %s: %v", lib, err)
		}
	}
}

func TestSchemasHideInjectedParameters(t *testing.T) {
	src, _ := files.ReadFile("lib/user_interaction_demo/user_interaction_demo.py")
	f, err := pysrc.ReadFile("user_interaction_demo.py", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tools) != 1 {
		t.Fatalf("%d tools", len(f.Tools))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, f.Tools[0].InputSchema()); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	want := `{"type":"object","properties":{"action":{"type":"string","description":"What to do, e.g. 'deploy' or 'rollback'.","default":"deploy"},"target":{"type":"string","description":"The environment, e.g. 'production' or 'staging'.","default":"production"}},"required":[]}`
	if got != want {
		t.Errorf("schema =\n%s\nwant\n%s", got, want)
	}
}

// TestPythonUnittests runs the Python tests of the libraries with a real
// interpreter.
func TestPythonUnittests(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	cmd := exec.Command(py, "-m", "unittest", "-q", "pylib_test.py")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python unittest failed: %v\n%s", err, out)
	}
}
