// Package ast declares the syntax tree of Python 3.12 source, after
// Python's own ast module: one Go type per node class, with the same field
// names where Go allows, byte-offset positions on every node (Pos/End), and
// Inspect / Walk to traverse a tree.
//
// A tree comes from the parser package:
//
//	mod, err := parser.ParseFile("x.py", src)
//	ast.Inspect(mod, func(n ast.Node) bool {
//		if call, ok := n.(*ast.Call); ok {
//			fmt.Println(call.Pos())
//		}
//		return true
//	})
//
// Differences from Python's ast: expression contexts (Load/Store/Del) are
// not recorded; `async def`, `async for` and `async with` are the sync node
// with IsAsync set; try/except* is Try with Star set; an expression
// statement is ExprStmt; a lone surrogate in a str literal (from an escape)
// is kept in its three-byte generalized UTF-8 (WTF-8) form.
package ast

import "github.com/lcptools/lcp/pysrc/token"

// Node is any node of the tree.
type Node interface {
	Pos() token.Pos // first byte of the node
	End() token.Pos // just after the last byte of the node
}

// Expr is an expression node.
type Expr interface {
	Node
	exprNode()
}

// Stmt is a statement node.
type Stmt interface {
	Node
	stmtNode()
}

// Pattern is a pattern of a match statement's case.
type Pattern interface {
	Node
	patternNode()
}

// Span is the source range of a node; every node embeds one.
type Span struct {
	From, To token.Pos
}

// Pos returns the first position of the node.
func (s *Span) Pos() token.Pos { return s.From }

// End returns the position just after the node.
func (s *Span) End() token.Pos { return s.To }

// ConstKind is the type of a Constant's value.
type ConstKind int

// The kinds of constants. For Str the value is Constant.Str (U marks the u
// prefix); for Bytes Constant.Str holds the bytes; for numbers Constant.Raw
// is the literal text as written (underscores included).
const (
	Str ConstKind = iota
	Bytes
	Int
	Float
	Complex
	True
	False
	None
	Ellipsis
)

var constKinds = [...]string{"Str", "Bytes", "Int", "Float", "Complex", "True", "False", "None", "Ellipsis"}

// String returns the kind's name.
func (k ConstKind) String() string {
	if k >= 0 && int(k) < len(constKinds) {
		return constKinds[k]
	}
	return "?"
}

// CmpOp is a comparison operator.
type CmpOp int

// Comparison operators.
const (
	Eq CmpOp = iota
	NotEq
	Lt
	LtE
	Gt
	GtE
	Is
	IsNot
	In
	NotIn
)

var cmpOps = [...]string{"==", "!=", "<", "<=", ">", ">=", "is", "is not", "in", "not in"}

// String returns the operator as written in source.
func (op CmpOp) String() string {
	if op >= 0 && int(op) < len(cmpOps) {
		return cmpOps[op]
	}
	return "?"
}

// TypeParamKind distinguishes the three kinds of PEP 695 type parameters.
type TypeParamKind int

// Kinds of type parameters.
const (
	TypeVar TypeParamKind = iota
	ParamSpec
	TypeVarTuple
)

// Inspect traverses the tree rooted at node in depth-first source order:
// it calls f(n) for each node; when f returns true, Inspect visits n's
// children, then calls f(nil).
func Inspect(node Node, f func(Node) bool) {
	if node == nil || !f(node) {
		return
	}
	walkChildren(node, func(c Node) { Inspect(c, f) })
	f(nil)
}

// Children returns the direct children of n in source order.
func Children(n Node) []Node {
	var out []Node
	walkChildren(n, func(c Node) { out = append(out, c) })
	return out
}

func walkArguments(a *Arguments, f func(Node)) {
	// Source order: positional parameters interleaved with their defaults
	// is not needed by callers; parameters first, then defaults, as
	// Python's ast.iter_child_nodes does (field order).
	for _, x := range a.PosOnly {
		f(x)
	}
	for _, x := range a.Args {
		f(x)
	}
	if a.VarArg != nil {
		f(a.VarArg)
	}
	for _, x := range a.KwOnly {
		f(x)
	}
	for _, x := range a.KwDefaults {
		if x != nil {
			f(x)
		}
	}
	if a.KwArg != nil {
		f(a.KwArg)
	}
	for _, x := range a.Defaults {
		f(x)
	}
}
