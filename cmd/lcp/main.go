// Command lcp lists, checks, calls and serves LLM tools: LCP Python tool
// folders, the built-in library and MCP servers. Run "lcp help".
package main

import (
	"os"

	"github.com/lcptools/lcp/internal/cli"
	// This binary is also the sandbox's init, entered from this package's
	// initializer before the heavy packages initialize.
	_ "github.com/lcptools/lcp/sandbox/boot"
)

func main() {
	os.Exit(cli.Main(cli.System()))
}
