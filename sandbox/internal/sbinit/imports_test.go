package sbinit

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// allowedImports are the packages the init may import. Each one Go must
// initialize before this package, and one that sorts late or waits for
// heavy packages (net, net/http, crypto, runtime/debug, path/filepath)
// would make every sandboxed command wait for the binary's initializers
// again (docs/decisions.md, the init's start).
var allowedImports = map[string]bool{
	"errors": true, "fmt": true, "io": true, "os": true,
	"os/signal": true, "path": true, "runtime": true, "strconv": true, "strings": true,
	"sync/atomic": true, "syscall": true, "time": true, "unsafe": true,
	"golang.org/x/sys/unix": true,
}

// TestImportsStayLow checks every non-test file of the package against
// allowedImports.
func TestImportsStayLow(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowedImports[p] {
				t.Errorf("%s imports %s: the init would start later", name, p)
			}
		}
	}
	if files == 0 {
		t.Fatal("no source files read")
	}
}
