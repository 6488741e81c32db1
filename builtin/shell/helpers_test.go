package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// parseWord parses src as the single argument of a command.
func parseWord(t *testing.T, src string) *syntax.Word {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader("x "+src), "")
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 2 {
		t.Fatalf("parse %q: not one word", src)
	}
	return call.Args[1]
}
