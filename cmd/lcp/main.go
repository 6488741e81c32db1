// Command lcp lists, checks, calls and serves LLM tools: LCP Python tool
// folders, the built-in library and MCP servers. Run "lcp help".
package main

import (
	"os"

	"github.com/lcptools/lcp/internal/cli"
)

func main() { os.Exit(cli.Main(cli.System())) }
