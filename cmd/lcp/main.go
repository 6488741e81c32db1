// Command lcp lists, checks, calls and serves LLM tools: LCP Python tool
// folders, the built-in library and MCP servers. Run "lcp help".
package main

import (
	"os"

	"github.com/lcptools/lcp/internal/cli"
	"github.com/lcptools/lcp/sandbox"
)

func main() {
	sandbox.Main() // first: this binary is also the sandbox's init
	os.Exit(cli.Main(cli.System()))
}
