package pyval_test

import (
	"fmt"

	"github.com/lcptools/lcp/pysrc/ast"
	"github.com/lcptools/lcp/pysrc/parser"
	"github.com/lcptools/lcp/pysrc/pyval"
)

func ExampleUnparse() {
	mod, _ := parser.ParseFile("x.py", []byte("x = f(1, k=(2,3)) ** -1\n"))
	value := mod.Body[0].(*ast.Assign).Value
	fmt.Println(pyval.Unparse(value))
	// Output: f(1, k=(2, 3)) ** (-1)
}

func ExampleLiteralJSON() {
	mod, _ := parser.ParseFile("x.py", []byte("x = {'a': (1, 2.50), 'b': None, 'a': 1e22}\n"))
	text, ok := pyval.LiteralJSON(mod.Body[0].(*ast.Assign).Value)
	fmt.Println(text, ok)
	// Output: {"a": 1e+22, "b": null} true
}
