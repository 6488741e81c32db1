package binding

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/lcptools/lcp/tool"
)

// TestManyToolsKeepOrder: the entries of a long list of tools are made on
// every CPU; the inventory is the one made on one (GOMAXPROCS=1), in the
// same order, with the first tool of a name winning.
func TestManyToolsKeepOrder(t *testing.T) {
	dir := t.TempDir()
	for f := range 6 {
		var b strings.Builder
		for i := range 150 {
			// Every file redefines the first file's tools: 750 duplicates.
			fmt.Fprintf(&b, "def tool_t%d(a: int, b: str = %q):\n    \"\"\"Tool %d of file %d.\n\n    a: the a\n    \"\"\"\n\n", i+f%2*150, fmt.Sprint(f), i, f)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("lib%d.py", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := func() ([]tool.Info, []tool.Diagnostic) {
		t.Helper()
		b, err := New(&Options{Folders: []string{dir}, Workspace: t.TempDir(), HostConfigs: map[string]map[string]any{"lib1": {"validate_arguments": true}}})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		infos, err := b.Tools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return infos, b.Diagnostics()
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	wantInfos, wantDiags := list()
	if len(wantInfos) != 300 {
		t.Fatalf("%d tools, want 300", len(wantInfos))
	}
	runtime.GOMAXPROCS(4)
	for range 3 {
		infos, diags := list()
		if !reflect.DeepEqual(infos, wantInfos) || !reflect.DeepEqual(diags, wantDiags) {
			t.Fatal("the inventory made on 4 CPUs differs from the one made on 1")
		}
	}
}
