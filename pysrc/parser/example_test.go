package parser_test

import (
	"fmt"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/parser"
)

func ExampleParseFile() {
	src := []byte("import subprocess\nsubprocess.run(['ls'])\n")
	mod, err := parser.ParseFile("code.py", src)
	if err != nil {
		panic(err)
	}
	ast.Inspect(mod, func(n ast.Node) bool {
		if call, ok := n.(*ast.Call); ok {
			if attr, ok := call.Func.(*ast.Attribute); ok {
				fmt.Println("call of", ast.Dump(attr.Value)+"."+attr.Attr)
			}
		}
		return true
	})
	// Output:
	// call of Name(Id="subprocess").run
}

func ExampleParseFile_errors() {
	_, err := parser.ParseFile("bad.py", []byte("def f(a=1, b):\n    pass\n"))
	fmt.Println(err)
	// Output:
	// bad.py:1:12: parameter without a default follows parameter with a default
}
