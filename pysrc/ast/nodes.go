package ast

// This file declares the node types, one per class of Python's ast module
// (names kept where Go allows), and their child order for Walk.

import (
	"strings"

	"github.com/lcptools/lcp/pysrc/token"
)

// BoolOp is `a and b` / `a or b`.
type BoolOp struct {
	Span
	Op     token.Token
	Values []Expr
}

func (*BoolOp) exprNode() {}

// NamedExpr is `target := value`.
type NamedExpr struct {
	Span
	Target Expr
	Value  Expr
}

func (*NamedExpr) exprNode() {}

// BinOp is a binary operation; Op is the operator token (PLUS, AT, ...).
type BinOp struct {
	Span
	Left  Expr
	Op    token.Token
	Right Expr
}

func (*BinOp) exprNode() {}

// UnaryOp is `not x`, `-x`, `+x` or `~x`.
type UnaryOp struct {
	Span
	Op      token.Token
	Operand Expr
}

func (*UnaryOp) exprNode() {}

// Lambda is `lambda args: body`.
type Lambda struct {
	Span
	Args *Arguments
	Body Expr
}

func (*Lambda) exprNode() {}

// IfExp is `body if test else orelse`.
type IfExp struct {
	Span
	Test   Expr
	Body   Expr
	OrElse Expr
}

func (*IfExp) exprNode() {}

// Dict is a dict display; a nil key marks `**value`.
type Dict struct {
	Span
	Keys   []Expr
	Values []Expr
}

func (*Dict) exprNode() {}

// Set is a set display.
type Set struct {
	Span
	Elts []Expr
}

func (*Set) exprNode() {}

// ListComp is `[elt for ...]`.
type ListComp struct {
	Span
	Elt        Expr
	Generators []*Comprehension
}

func (*ListComp) exprNode() {}

// SetComp is `{elt for ...}`.
type SetComp struct {
	Span
	Elt        Expr
	Generators []*Comprehension
}

func (*SetComp) exprNode() {}

// DictComp is `{key: value for ...}`.
type DictComp struct {
	Span
	Key        Expr
	Value      Expr
	Generators []*Comprehension
}

func (*DictComp) exprNode() {}

// GeneratorExp is `(elt for ...)`.
type GeneratorExp struct {
	Span
	Elt        Expr
	Generators []*Comprehension
}

func (*GeneratorExp) exprNode() {}

// Await is `await value`.
type Await struct {
	Span
	Value Expr
}

func (*Await) exprNode() {}

// Yield is `yield` or `yield value` (Value may be nil).
type Yield struct {
	Span
	Value Expr
}

func (*Yield) exprNode() {}

// YieldFrom is `yield from value`.
type YieldFrom struct {
	Span
	Value Expr
}

func (*YieldFrom) exprNode() {}

// Compare is a comparison chain; Ops holds token.LESS, ..., token.IN, and NotIn / IsNot as NOTIN / ISNOT.
type Compare struct {
	Span
	Left        Expr
	Ops         []CmpOp
	Comparators []Expr
}

func (*Compare) exprNode() {}

// Call is a call `func(args, keywords)`.
type Call struct {
	Span
	Func     Expr
	Args     []Expr
	Keywords []*Keyword
}

func (*Call) exprNode() {}

// FormattedValue is one replacement field of an f-string. Conversion is -1, 's', 'r' or 'a'.
type FormattedValue struct {
	Span
	Value      Expr
	Conversion int
	FormatSpec *JoinedStr
}

func (*FormattedValue) exprNode() {}

// JoinedStr is an f-string (after implicit concatenation): Constant and FormattedValue parts.
type JoinedStr struct {
	Span
	Values []Expr
}

func (*JoinedStr) exprNode() {}

// Constant is a literal: see ConstKind.
type Constant struct {
	Span
	Kind ConstKind
	Raw  string
	Str  string
	U    bool
}

func (*Constant) exprNode() {}

// Attribute is `value.attr`.
type Attribute struct {
	Span
	Value Expr
	Attr  string
}

func (*Attribute) exprNode() {}

// Subscript is `value[slice]`.
type Subscript struct {
	Span
	Value Expr
	Slice Expr
}

func (*Subscript) exprNode() {}

// Starred is `*value`.
type Starred struct {
	Span
	Value Expr
}

func (*Starred) exprNode() {}

// Name is an identifier, NFKC-normalized.
type Name struct {
	Span
	Id string
}

func (*Name) exprNode() {}

// List is a list display or target.
type List struct {
	Span
	Elts []Expr
}

func (*List) exprNode() {}

// Tuple is a tuple; Parens reports whether it was written in parentheses.
type Tuple struct {
	Span
	Elts   []Expr
	Parens bool
}

func (*Tuple) exprNode() {}

// Slice is `lower:upper:step` inside a subscript; parts may be nil.
type Slice struct {
	Span
	Lower Expr
	Upper Expr
	Step  Expr
}

func (*Slice) exprNode() {}

// BadExpr stands for an expression that could not be parsed.
type BadExpr struct {
	Span
}

func (*BadExpr) exprNode() {}

// FunctionDef is `def` or `async def` (IsAsync).
type FunctionDef struct {
	Span
	IsAsync    bool
	Decorators []Expr
	Name       string
	NamePos    token.Pos
	TypeParams []*TypeParam
	Args       *Arguments
	Returns    Expr
	Body       []Stmt
}

func (*FunctionDef) stmtNode() {}

// ClassDef is a class definition.
type ClassDef struct {
	Span
	Decorators []Expr
	Name       string
	TypeParams []*TypeParam
	Bases      []Expr
	Keywords   []*Keyword
	Body       []Stmt
}

func (*ClassDef) stmtNode() {}

// Return is `return [value]`.
type Return struct {
	Span
	Value Expr
}

func (*Return) stmtNode() {}

// Delete is `del targets`.
type Delete struct {
	Span
	Targets []Expr
}

func (*Delete) stmtNode() {}

// Assign is `t1 = t2 = value`.
type Assign struct {
	Span
	Targets []Expr
	Value   Expr
}

func (*Assign) stmtNode() {}

// TypeAlias is `type Name[params] = value`.
type TypeAlias struct {
	Span
	Name       *Name
	TypeParams []*TypeParam
	Value      Expr
}

func (*TypeAlias) stmtNode() {}

// AugAssign is `target op= value`; Op is the binary operator token (PLUS for +=).
type AugAssign struct {
	Span
	Target Expr
	Op     token.Token
	Value  Expr
}

func (*AugAssign) stmtNode() {}

// AnnAssign is `target: annotation [= value]`; Simple is set for a plain unparenthesized name.
type AnnAssign struct {
	Span
	Target     Expr
	Annotation Expr
	Value      Expr
	Simple     bool
}

func (*AnnAssign) stmtNode() {}

// For is `for` or `async for`.
type For struct {
	Span
	IsAsync bool
	Target  Expr
	Iter    Expr
	Body    []Stmt
	OrElse  []Stmt
}

func (*For) stmtNode() {}

// While is a while loop.
type While struct {
	Span
	Test   Expr
	Body   []Stmt
	OrElse []Stmt
}

func (*While) stmtNode() {}

// If is `if`; an `elif` is an If alone in OrElse.
type If struct {
	Span
	Test   Expr
	Body   []Stmt
	OrElse []Stmt
}

func (*If) stmtNode() {}

// With is `with` or `async with`.
type With struct {
	Span
	IsAsync bool
	Items   []*WithItem
	Body    []Stmt
}

func (*With) stmtNode() {}

// Match is a match statement.
type Match struct {
	Span
	Subject Expr
	Cases   []*MatchCase
}

func (*Match) stmtNode() {}

// Raise is `raise [exc [from cause]]`.
type Raise struct {
	Span
	Exc   Expr
	Cause Expr
}

func (*Raise) stmtNode() {}

// Try is try/except/else/finally; Star marks `except*`.
type Try struct {
	Span
	Body      []Stmt
	Handlers  []*ExceptHandler
	OrElse    []Stmt
	FinalBody []Stmt
	Star      bool
}

func (*Try) stmtNode() {}

// Assert is `assert test[, msg]`.
type Assert struct {
	Span
	Test Expr
	Msg  Expr
}

func (*Assert) stmtNode() {}

// Import is `import a.b as c, ...`.
type Import struct {
	Span
	Names []*Alias
}

func (*Import) stmtNode() {}

// ImportFrom is `from ..module import names`.
type ImportFrom struct {
	Span
	Module string
	Names  []*Alias
	Level  int
}

func (*ImportFrom) stmtNode() {}

// Global is `global names`.
type Global struct {
	Span
	Names []string
}

func (*Global) stmtNode() {}

// Nonlocal is `nonlocal names`.
type Nonlocal struct {
	Span
	Names []string
}

func (*Nonlocal) stmtNode() {}

// ExprStmt is an expression statement.
type ExprStmt struct {
	Span
	Value Expr
}

func (*ExprStmt) stmtNode() {}

// Pass is `pass`.
type Pass struct {
	Span
}

func (*Pass) stmtNode() {}

// Break is `break`.
type Break struct {
	Span
}

func (*Break) stmtNode() {}

// Continue is `continue`.
type Continue struct {
	Span
}

func (*Continue) stmtNode() {}

// BadStmt stands for source that could not be parsed as a statement.
type BadStmt struct {
	Span
}

func (*BadStmt) stmtNode() {}

// MatchValue is a value pattern.
type MatchValue struct {
	Span
	Value Expr
}

func (*MatchValue) patternNode() {}

// MatchSingleton is None, True or False.
type MatchSingleton struct {
	Span
	Value *Constant
}

func (*MatchSingleton) patternNode() {}

// MatchSequence is `[p, ...]` or `(p, ...)`.
type MatchSequence struct {
	Span
	Patterns []Pattern
}

func (*MatchSequence) patternNode() {}

// MatchMapping is `{key: p, **rest}`.
type MatchMapping struct {
	Span
	Keys     []Expr
	Patterns []Pattern
	Rest     string
}

func (*MatchMapping) patternNode() {}

// MatchClass is `Cls(p, k=p)`.
type MatchClass struct {
	Span
	Cls         Expr
	Patterns    []Pattern
	KwdAttrs    []string
	KwdPatterns []Pattern
}

func (*MatchClass) patternNode() {}

// MatchStar is `*name` (Name empty for `*_`).
type MatchStar struct {
	Span
	Name string
}

func (*MatchStar) patternNode() {}

// MatchAs is `p as name`, a capture `name`, or `_` (both empty).
type MatchAs struct {
	Span
	Pattern Pattern
	Name    string
}

func (*MatchAs) patternNode() {}

// MatchOr is `p | q`.
type MatchOr struct {
	Span
	Patterns []Pattern
}

func (*MatchOr) patternNode() {}

// Module is a whole source file.
type Module struct {
	Span
	Body []Stmt
}

// Comprehension is one `for target in iter if ...` clause.
type Comprehension struct {
	Span
	Target  Expr
	Iter    Expr
	Ifs     []Expr
	IsAsync bool
}

// ExceptHandler is one `except [type [as name]]:` clause.
type ExceptHandler struct {
	Span
	Type Expr
	Name string
	Body []Stmt
}

// Arguments is a parameter list. Defaults belong to the last of PosOnly+Args; KwDefaults has one entry (maybe nil) per KwOnly.
type Arguments struct {
	Span
	PosOnly    []*Arg
	Args       []*Arg
	VarArg     *Arg
	KwOnly     []*Arg
	KwDefaults []Expr
	KwArg      *Arg
	Defaults   []Expr
}

// Arg is one parameter with its optional annotation.
type Arg struct {
	Span
	Name       string
	Annotation Expr
}

// Keyword is `arg=value` in a call, or `**value` when Arg is empty.
type Keyword struct {
	Span
	Arg   string
	Value Expr
}

// Alias is `name [as asname]` in an import.
type Alias struct {
	Span
	Name   string
	AsName string
}

// ImportBinding is the name `import NAME [as ASNAME]` binds in its scope
// and the module that name stands for: `import os.path` binds os to os,
// `import numpy as np` binds np to numpy.
func (a *Alias) ImportBinding() (local, module string) {
	if a.AsName != "" {
		return a.AsName, a.Name
	}
	top := a.Name
	if i := strings.IndexByte(top, '.'); i >= 0 {
		top = top[:i]
	}
	return top, top
}

// WithItem is `context [as target]`.
type WithItem struct {
	Span
	Context Expr
	Vars    Expr
}

// MatchCase is `case pattern [if guard]: body`.
type MatchCase struct {
	Span
	Pattern Pattern
	Guard   Expr
	Body    []Stmt
}

// TypeParam is a PEP 695 type parameter: Kind is TypeVar, ParamSpec (**P) or TypeVarTuple (*Ts).
type TypeParam struct {
	Span
	Kind  TypeParamKind
	Name  string
	Bound Expr
}

// walkChildren calls f for every direct child node of n, in source order.
func walkChildren(n Node, f func(Node)) {
	switch n := n.(type) {
	case *BoolOp:
		for _, x := range n.Values {
			if x != nil {
				f(x)
			}
		}
	case *NamedExpr:
		if n.Target != nil {
			f(n.Target)
		}
		if n.Value != nil {
			f(n.Value)
		}
	case *BinOp:
		if n.Left != nil {
			f(n.Left)
		}
		if n.Right != nil {
			f(n.Right)
		}
	case *UnaryOp:
		if n.Operand != nil {
			f(n.Operand)
		}
	case *Lambda:
		if n.Args != nil {
			f(n.Args)
		}
		if n.Body != nil {
			f(n.Body)
		}
	case *IfExp:
		if n.Test != nil {
			f(n.Test)
		}
		if n.Body != nil {
			f(n.Body)
		}
		if n.OrElse != nil {
			f(n.OrElse)
		}
	case *Dict:
		for i, v := range n.Values {
			if i < len(n.Keys) && n.Keys[i] != nil {
				f(n.Keys[i])
			}
			f(v)
		}
	case *Set:
		for _, x := range n.Elts {
			if x != nil {
				f(x)
			}
		}
	case *ListComp:
		if n.Elt != nil {
			f(n.Elt)
		}
		for _, x := range n.Generators {
			if x != nil {
				f(x)
			}
		}
	case *SetComp:
		if n.Elt != nil {
			f(n.Elt)
		}
		for _, x := range n.Generators {
			if x != nil {
				f(x)
			}
		}
	case *DictComp:
		if n.Key != nil {
			f(n.Key)
		}
		if n.Value != nil {
			f(n.Value)
		}
		for _, x := range n.Generators {
			if x != nil {
				f(x)
			}
		}
	case *GeneratorExp:
		if n.Elt != nil {
			f(n.Elt)
		}
		for _, x := range n.Generators {
			if x != nil {
				f(x)
			}
		}
	case *Await:
		if n.Value != nil {
			f(n.Value)
		}
	case *Yield:
		if n.Value != nil {
			f(n.Value)
		}
	case *YieldFrom:
		if n.Value != nil {
			f(n.Value)
		}
	case *Compare:
		if n.Left != nil {
			f(n.Left)
		}
		for _, x := range n.Comparators {
			if x != nil {
				f(x)
			}
		}
	case *Call:
		if n.Func != nil {
			f(n.Func)
		}
		for _, x := range n.Args {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.Keywords {
			if x != nil {
				f(x)
			}
		}
	case *FormattedValue:
		if n.Value != nil {
			f(n.Value)
		}
		if n.FormatSpec != nil {
			f(n.FormatSpec)
		}
	case *JoinedStr:
		for _, x := range n.Values {
			if x != nil {
				f(x)
			}
		}
	case *Constant:
	case *Attribute:
		if n.Value != nil {
			f(n.Value)
		}
	case *Subscript:
		if n.Value != nil {
			f(n.Value)
		}
		if n.Slice != nil {
			f(n.Slice)
		}
	case *Starred:
		if n.Value != nil {
			f(n.Value)
		}
	case *Name:
	case *List:
		for _, x := range n.Elts {
			if x != nil {
				f(x)
			}
		}
	case *Tuple:
		for _, x := range n.Elts {
			if x != nil {
				f(x)
			}
		}
	case *Slice:
		if n.Lower != nil {
			f(n.Lower)
		}
		if n.Upper != nil {
			f(n.Upper)
		}
		if n.Step != nil {
			f(n.Step)
		}
	case *BadExpr:
	case *FunctionDef:
		for _, x := range n.Decorators {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.TypeParams {
			if x != nil {
				f(x)
			}
		}
		if n.Args != nil {
			f(n.Args)
		}
		if n.Returns != nil {
			f(n.Returns)
		}
		for _, x := range n.Body {
			if x != nil {
				f(x)
			}
		}
	case *ClassDef:
		for _, x := range n.Decorators {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.TypeParams {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.Bases {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.Keywords {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.Body {
			if x != nil {
				f(x)
			}
		}
	case *Return:
		if n.Value != nil {
			f(n.Value)
		}
	case *Delete:
		for _, x := range n.Targets {
			if x != nil {
				f(x)
			}
		}
	case *Assign:
		for _, x := range n.Targets {
			if x != nil {
				f(x)
			}
		}
		if n.Value != nil {
			f(n.Value)
		}
	case *TypeAlias:
		if n.Name != nil {
			f(n.Name)
		}
		for _, x := range n.TypeParams {
			if x != nil {
				f(x)
			}
		}
		if n.Value != nil {
			f(n.Value)
		}
	case *AugAssign:
		if n.Target != nil {
			f(n.Target)
		}
		if n.Value != nil {
			f(n.Value)
		}
	case *AnnAssign:
		if n.Target != nil {
			f(n.Target)
		}
		if n.Annotation != nil {
			f(n.Annotation)
		}
		if n.Value != nil {
			f(n.Value)
		}
	case *For:
		if n.Target != nil {
			f(n.Target)
		}
		if n.Iter != nil {
			f(n.Iter)
		}
		for _, x := range n.Body {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.OrElse {
			if x != nil {
				f(x)
			}
		}
	case *While:
		if n.Test != nil {
			f(n.Test)
		}
		for _, x := range n.Body {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.OrElse {
			if x != nil {
				f(x)
			}
		}
	case *If:
		if n.Test != nil {
			f(n.Test)
		}
		for _, x := range n.Body {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.OrElse {
			if x != nil {
				f(x)
			}
		}
	case *With:
		for _, x := range n.Items {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.Body {
			if x != nil {
				f(x)
			}
		}
	case *Match:
		if n.Subject != nil {
			f(n.Subject)
		}
		for _, x := range n.Cases {
			if x != nil {
				f(x)
			}
		}
	case *Raise:
		if n.Exc != nil {
			f(n.Exc)
		}
		if n.Cause != nil {
			f(n.Cause)
		}
	case *Try:
		for _, x := range n.Body {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.Handlers {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.OrElse {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.FinalBody {
			if x != nil {
				f(x)
			}
		}
	case *Assert:
		if n.Test != nil {
			f(n.Test)
		}
		if n.Msg != nil {
			f(n.Msg)
		}
	case *Import:
		for _, x := range n.Names {
			if x != nil {
				f(x)
			}
		}
	case *ImportFrom:
		for _, x := range n.Names {
			if x != nil {
				f(x)
			}
		}
	case *Global:
	case *Nonlocal:
	case *ExprStmt:
		if n.Value != nil {
			f(n.Value)
		}
	case *Pass:
	case *Break:
	case *Continue:
	case *BadStmt:
	case *MatchValue:
		if n.Value != nil {
			f(n.Value)
		}
	case *MatchSingleton:
		if n.Value != nil {
			f(n.Value)
		}
	case *MatchSequence:
		for _, x := range n.Patterns {
			if x != nil {
				f(x)
			}
		}
	case *MatchMapping:
		for _, x := range n.Keys {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.Patterns {
			if x != nil {
				f(x)
			}
		}
	case *MatchClass:
		if n.Cls != nil {
			f(n.Cls)
		}
		for _, x := range n.Patterns {
			if x != nil {
				f(x)
			}
		}
		for _, x := range n.KwdPatterns {
			if x != nil {
				f(x)
			}
		}
	case *MatchStar:
	case *MatchAs:
		if n.Pattern != nil {
			f(n.Pattern)
		}
	case *MatchOr:
		for _, x := range n.Patterns {
			if x != nil {
				f(x)
			}
		}
	case *Module:
		for _, x := range n.Body {
			if x != nil {
				f(x)
			}
		}
	case *Comprehension:
		if n.Target != nil {
			f(n.Target)
		}
		if n.Iter != nil {
			f(n.Iter)
		}
		for _, x := range n.Ifs {
			if x != nil {
				f(x)
			}
		}
	case *ExceptHandler:
		if n.Type != nil {
			f(n.Type)
		}
		for _, x := range n.Body {
			if x != nil {
				f(x)
			}
		}
	case *Arguments:
		walkArguments(n, f)
	case *Arg:
		if n.Annotation != nil {
			f(n.Annotation)
		}
	case *Keyword:
		if n.Value != nil {
			f(n.Value)
		}
	case *Alias:
	case *WithItem:
		if n.Context != nil {
			f(n.Context)
		}
		if n.Vars != nil {
			f(n.Vars)
		}
	case *MatchCase:
		if n.Pattern != nil {
			f(n.Pattern)
		}
		if n.Guard != nil {
			f(n.Guard)
		}
		for _, x := range n.Body {
			if x != nil {
				f(x)
			}
		}
	case *TypeParam:
		if n.Bound != nil {
			f(n.Bound)
		}
	}
}
