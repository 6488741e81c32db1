// Package deps pins the module's dependencies while the packages that use
// them are being written in parallel. It is removed once every dependency
// has a real importer.
package deps

import (
	_ "github.com/creack/pty"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/term"
	_ "golang.org/x/tools/txtar"
	_ "mvdan.cc/sh/v3/syntax"
)
