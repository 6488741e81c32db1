package scaffold_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lcptools/lcp/scaffold"
)

func ExampleLibrary() {
	dir, _ := os.MkdirTemp("", "tools")
	defer os.RemoveAll(dir)
	path, err := scaffold.Library(dir, "my_notes")
	if err != nil {
		fmt.Println(err)
		return
	}
	rel, _ := filepath.Rel(dir, path)
	fmt.Println(rel, scaffold.ToolName("my_notes"))
	// Output:
	// my_notes/my_notes.py tool_my_notes_save_note
}
