package ast

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/lcptools/lcp/pysrc/token"
)

// Dump returns a compact one-line text of the tree rooted at n in the
// style of Python's ast.dump: the node type, then its non-empty fields.
// Positions are left out.
func Dump(n Node) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(n))
	return b.String()
}

var posType = reflect.TypeOf(token.Pos(0))

func dumpValue(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		dumpValue(b, v.Elem())
	case reflect.Struct:
		t := v.Type()
		b.WriteString(t.Name())
		b.WriteByte('(')
		first := true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Name == "Span" || f.Type == posType {
				continue
			}
			fv := v.Field(i)
			if fv.IsZero() {
				continue
			}
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(f.Name)
			b.WriteByte('=')
			dumpValue(b, fv)
		}
		b.WriteByte(')')
	case reflect.Slice:
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			dumpValue(b, v.Index(i))
		}
		b.WriteByte(']')
	case reflect.String:
		b.WriteString(strconv.Quote(v.String()))
	default:
		if v.Type() == reflect.TypeOf(token.Token(0)) {
			b.WriteString(strconv.Quote(v.Interface().(token.Token).String()))
			return
		}
		if s, ok := v.Interface().(fmt.Stringer); ok {
			b.WriteString(s.String())
			return
		}
		fmt.Fprint(b, v.Interface())
	}
}
