package scanner

import (
	"sort"

	"github.com/lcptools/lcp/pysrc/token"
)

// Error is one syntax error: a position and a message.
type Error struct {
	Pos token.Position
	Msg string
}

// Error formats the error as file:line:col: msg.
func (e Error) Error() string {
	if e.Pos.Filename != "" || e.Pos.IsValid() {
		return e.Pos.String() + ": " + e.Msg
	}
	return e.Msg
}

// ErrorList is a list of syntax errors, sortable by position. A non-empty
// list is itself an error whose text has one error per line.
type ErrorList []*Error

// Add appends an error.
func (p *ErrorList) Add(pos token.Position, msg string) {
	*p = append(*p, &Error{Pos: pos, Msg: msg})
}

// Len implements sort.Interface.
func (p ErrorList) Len() int { return len(p) }

// Swap implements sort.Interface.
func (p ErrorList) Swap(i, j int) { p[i], p[j] = p[j], p[i] }

// Less orders errors by file, line and column; Sort keeps the order in
// which errors of the same position were found.
func (p ErrorList) Less(i, j int) bool {
	e, f := &p[i].Pos, &p[j].Pos
	if e.Filename != f.Filename {
		return e.Filename < f.Filename
	}
	if e.Line != f.Line {
		return e.Line < f.Line
	}
	return e.Column < f.Column
}

// Sort sorts the list by position (stable, so equal positions keep the
// order in which they were found).
func (p ErrorList) Sort() { sort.Stable(p) }

// Error returns all errors, one per line.
func (p ErrorList) Error() string {
	switch len(p) {
	case 0:
		return "no errors"
	case 1:
		return p[0].Error()
	}
	s := ""
	for i, e := range p {
		if i > 0 {
			s += "\n"
		}
		s += e.Error()
	}
	return s
}

// Err returns the list as an error, or nil when it is empty.
func (p ErrorList) Err() error {
	if len(p) == 0 {
		return nil
	}
	return p
}
