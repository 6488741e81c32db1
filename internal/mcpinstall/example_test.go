package mcpinstall_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lcptools/lcp/internal/mcpinstall"
)

// Adding a server to Cursor's configuration: the other servers and the
// file's layout stay as they were.
func Example() {
	home, _ := os.MkdirTemp("", "home")
	defer os.RemoveAll(home)
	c, _ := mcpinstall.Lookup("cursor")
	path, _ := c.Path(mcpinstall.User, mcpinstall.Paths{GOOS: "linux", Home: home})
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	_ = os.WriteFile(path, []byte("{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\"}\n  }\n}\n"), 0o600)

	entry := c.Stdio("/usr/local/bin/lcp", []string{"mcp", "--tools=/home/ada/tools"})
	res, err := mcpinstall.Install(path, c.Key, "lcp", entry, time.Now())
	if err != nil {
		panic(err)
	}
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	fmt.Println(res.Backup != "", json.Valid(b))
	// Output:
	// {
	//   "mcpServers": {
	//     "fs": {"command": "npx"},
	//     "lcp": {
	//       "command": "/usr/local/bin/lcp",
	//       "args": [
	//         "mcp",
	//         "--tools=/home/ada/tools"
	//       ]
	//     }
	//   }
	// }
	// true true
}
