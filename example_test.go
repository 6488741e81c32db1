package lcp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lcptools/lcp"
)

// A Go built-in library mounted beside a folder of Python tools.
func ExampleEngine_MountToolLibrary() {
	dir, _ := os.MkdirTemp("", "tools")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "greet.py"), []byte("def tool_greet(name: str):\n    \"\"\"Greets.\"\"\"\n"), 0o644)
	ctx := context.Background()
	eng, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{dir}})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	fmt.Println(eng.FindLibraryForTool("tool_execute_shell_command"))
	ok, err := eng.MountToolLibrary("system_shell")
	fmt.Println(ok, err)
	infos, _ := eng.Tools(ctx)
	for _, in := range infos {
		fmt.Println(in.Name, in.Library.ID)
	}
	// Output:
	// system_shell
	// true <nil>
	// tool_greet greet
	// tool_execute_shell_command system_shell
}

// Reading the tool files again after an edit (Config.Watch does it on
// its own when the files change).
func ExampleEngine_Reload() {
	dir, _ := os.MkdirTemp("", "tools")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "tools.py")
	_ = os.WriteFile(file, []byte("def tool_a():\n    \"\"\"A.\"\"\"\n"), 0o644)
	ctx := context.Background()
	eng, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{dir},
		OnChange: func(c lcp.Change) { fmt.Println("changed:", c.Added, c.Changed) }})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	_ = os.WriteFile(file, []byte("def tool_a():\n    \"\"\"A, again.\"\"\"\n\ndef tool_b():\n    \"\"\"B.\"\"\"\n"), 0o644)
	c, _ := eng.Reload(ctx)
	fmt.Println(c.Tools())
	// Output:
	// changed: [tool_b] [tool_a]
	// true
}
