package binding

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// promptCorpus writes 50 library files of 10 tools each (500 tools); 20 of
// the tools have a tool_<name>_prompt function.
func promptCorpus(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	n := 0
	for f := 0; f < 50; f++ {
		var b strings.Builder
		for i := 0; i < 10; i++ {
			name := fmt.Sprintf("tool_f%d_t%d", f, i)
			fmt.Fprintf(&b, "def %s(a: int, b: str = 'x'):\n    \"\"\"Tool %d of file %d.\n\n    Args:\n        a: a number\n        b: a text\n    \"\"\"\n    return a\n\n", name, i, f)
			if f%5 == 0 && i < 4 && n < 20 {
				fmt.Fprintf(&b, "def %s_prompt():\n    return 'Dynamic description of %s.'\n\n", name, name)
				n++
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("lib%02d.py", f)), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

func TestDynamicPromptsApplied(t *testing.T) {
	needPython(t)
	dir := promptCorpus(t)
	b, err := New(&Options{Folders: []string{dir}, DynamicPrompts: true, Workspace: t.TempDir(), PromptTimeout: noPromptDeadline})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	infos, err := b.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dynamic := 0
	for _, i := range infos {
		if strings.HasPrefix(i.Description, "Dynamic description of "+i.Name) {
			dynamic++
		}
	}
	if len(infos) != 500 || dynamic != 20 {
		t.Fatalf("%d tools, %d dynamic descriptions; want 500 and 20", len(infos), dynamic)
	}
}

// BenchmarkSpecsStatic and BenchmarkSpecsDynamicWarm build the specs of 500
// tools; the dynamic one runs the 20 prompt functions (libraries already
// loaded). bench/prompts.sh prints their ratio.
func BenchmarkSpecsStatic(b *testing.B)      { benchSpecs(b, false) }
func BenchmarkSpecsDynamicWarm(b *testing.B) { benchSpecs(b, true) }

func benchSpecs(b *testing.B, dynamic bool) {
	needPython(b)
	dir := promptCorpus(b)
	bd, err := New(&Options{Folders: []string{dir}, DynamicPrompts: dynamic, Workspace: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer bd.Close()
	ctx := context.Background()
	if _, err := bd.Tools(ctx); err != nil { // loads the libraries
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := bd.Tools(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpecsDynamicCold includes discovery and the first load of the
// libraries with prompt functions (fresh workers).
func BenchmarkSpecsDynamicCold(b *testing.B) {
	needPython(b)
	dir := promptCorpus(b)
	ws := b.TempDir()
	for b.Loop() {
		bd, err := New(&Options{Folders: []string{dir}, DynamicPrompts: true, Workspace: ws})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bd.Tools(context.Background()); err != nil {
			b.Fatal(err)
		}
		bd.Close()
	}
}
