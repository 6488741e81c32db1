package parser

import "github.com/lcptools/lcp/pysrc/ast"

// Arena holds the memory of the syntax trees parsed with it: the most
// frequent node types and the slices of node lists come from chunks that
// Reset makes available again. A caller that parses many files and drops
// each tree after use (as pysrc.ReadFile does) saves most allocations and
// garbage collection work. The zero Arena is ready to use.
//
// An Arena is not safe for concurrent use. After Reset, every node of the
// trees parsed before is invalid.
type Arena struct {
	names    slab[ast.Name]
	consts   slab[ast.Constant]
	attrs    slab[ast.Attribute]
	calls    slab[ast.Call]
	binops   slab[ast.BinOp]
	kws      slab[ast.Keyword]
	args     slab[ast.Arg]
	exprs    slab[ast.ExprStmt]
	assigns  slab[ast.Assign]
	subs     slab[ast.Subscript]
	tuples   slab[ast.Tuple]
	lists    slab[ast.List]
	starred  slab[ast.Starred]
	unary    slab[ast.UnaryOp]
	compares slab[ast.Compare]
	boolops  slab[ast.BoolOp]
	returns  slab[ast.Return]
	ifs      slab[ast.If]
	argsets  slab[ast.Arguments]
	funcs    slab[ast.FunctionDef]
	slices   slab[ast.Slice]
	dicts    slab[ast.Dict]
	augs     slab[ast.AugAssign]
	anns     slab[ast.AnnAssign]
	fors     slab[ast.For]
	comps    slab[ast.Comprehension]
	aliases  slab[ast.Alias]
	imports  slab[ast.ImportFrom]

	exprLists listSlab[ast.Expr]
	stmtLists listSlab[ast.Stmt]
	kwLists   listSlab[*ast.Keyword]
	argLists  listSlab[*ast.Arg]
	opLists   listSlab[ast.CmpOp]

	// toks is the parser's token window, kept for the next parse.
	toks []tk
}

// Reset makes the arena's memory available for the next parse; the trees
// parsed before must not be used any more.
func (a *Arena) Reset() {
	a.names.reset()
	a.consts.reset()
	a.attrs.reset()
	a.calls.reset()
	a.binops.reset()
	a.kws.reset()
	a.args.reset()
	a.exprs.reset()
	a.assigns.reset()
	a.subs.reset()
	a.tuples.reset()
	a.lists.reset()
	a.starred.reset()
	a.unary.reset()
	a.compares.reset()
	a.boolops.reset()
	a.returns.reset()
	a.ifs.reset()
	a.argsets.reset()
	a.funcs.reset()
	a.slices.reset()
	a.dicts.reset()
	a.augs.reset()
	a.anns.reset()
	a.fors.reset()
	a.comps.reset()
	a.aliases.reset()
	a.imports.reset()
	a.exprLists.reset()
	a.stmtLists.reset()
	a.kwLists.reset()
	a.argLists.reset()
	a.opLists.reset()
}

// slab hands out values of one type from chunks that grow geometrically.
type slab[T any] struct {
	chunks [][]T
	ci, i  int // current chunk, next free index in it
}

func (s *slab[T]) next() *T {
	for {
		if s.ci < len(s.chunks) {
			if c := s.chunks[s.ci]; s.i < len(c) {
				x := &c[s.i]
				s.i++
				return x
			}
			s.ci++
			s.i = 0
			continue
		}
		n := 16
		if k := len(s.chunks); k > 0 {
			n = min(2*len(s.chunks[k-1]), 1024)
		}
		s.chunks = append(s.chunks, make([]T, n))
	}
}

// take returns a zeroed value: chunks are zero when made and cleared by
// reset.
func (s *slab[T]) take() *T { return s.next() }

// put stores v and returns its address.
func put[T any](s *slab[T], v T) *T {
	x := s.next()
	*x = v
	return x
}

func (s *slab[T]) reset() {
	for k := 0; k <= s.ci && k < len(s.chunks); k++ {
		clear(s.chunks[k])
	}
	s.ci, s.i = 0, 0
}

// listSlab hands out slices (of exact length and capacity) from chunks.
type listSlab[T any] struct {
	chunks [][]T
	ci, i  int
}

func (s *listSlab[T]) make(n int) []T {
	if n > 256 {
		return make([]T, n)
	}
	for {
		if s.ci < len(s.chunks) {
			if c := s.chunks[s.ci]; s.i+n <= len(c) {
				out := c[s.i : s.i+n : s.i+n]
				s.i += n
				return out
			}
			s.ci++
			s.i = 0
			continue
		}
		size := 64
		if k := len(s.chunks); k > 0 {
			size = min(2*len(s.chunks[k-1]), 4096)
		}
		s.chunks = append(s.chunks, make([]T, size))
	}
}

func (s *listSlab[T]) reset() {
	for k := 0; k <= s.ci && k < len(s.chunks); k++ {
		clear(s.chunks[k])
	}
	s.ci, s.i = 0, 0
}
