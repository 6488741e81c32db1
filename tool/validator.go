package tool

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// validator checks decoded JSON values against one schema document
// (draft 2020-12 or draft-07, booleans as schemas, local $ref). It reports
// every failing leaf rather than the first, so a caller sees all bad
// arguments at once. "format" is an annotation, as draft 2020-12 says, and
// unevaluatedProperties/unevaluatedItems are not checked.
type validator struct {
	root   any
	draft7 bool
	ids    map[string]any            // $id and $anchor targets, by their reference text
	re     map[string]*regexp.Regexp // compiled "pattern" and "patternProperties" keys
}

// maxDepth bounds how deep a value is validated through $ref chains, so a
// schema that refers to itself without consuming input cannot loop.
const maxDepth = 512

// newValidator checks a decoded schema document and prepares its
// references and patterns.
func newValidator(doc any) (*validator, error) {
	v := &validator{root: doc, ids: map[string]any{}, re: map[string]*regexp.Regexp{}}
	if m, ok := doc.(map[string]any); ok {
		if s, _ := m["$schema"].(string); strings.Contains(s, "draft-07") || strings.Contains(s, "draft-06") || strings.Contains(s, "draft-04") {
			v.draft7 = true
		}
	}
	if err := v.scan(doc, "", true); err != nil {
		return nil, err
	}
	return v, v.checkRefs(doc)
}

// subschemaKeys are the keywords whose value is one schema.
var subschemaKeys = []string{"additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems"}

// schemaMapKeys are the keywords whose value maps names to schemas.
var schemaMapKeys = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}

// schemaListKeys are the keywords whose value is a list of schemas.
var schemaListKeys = []string{"allOf", "anyOf", "oneOf", "prefixItems"}

// scan checks keyword shapes, compiles patterns and records $id/$anchor
// targets; at is the schema's JSON pointer within the document.
func (v *validator) scan(s any, at string, root bool) error {
	if _, ok := s.(bool); ok {
		return nil
	}
	m, ok := s.(map[string]any)
	if !ok {
		return fmt.Errorf("schema at %q is %s, want an object or a boolean", at, kindOf(s))
	}
	if id, ok := m["$id"].(string); ok && id != "" {
		v.ids[strings.TrimSuffix(id, "#")] = m
	}
	if a, ok := m["$anchor"].(string); ok && a != "" {
		v.ids["#"+a] = m
	}
	if p, ok := m["pattern"]; ok {
		if err := v.compilePattern(p, at+"/pattern"); err != nil {
			return err
		}
	}
	if t, ok := m["type"]; ok {
		if err := checkType(t, at); err != nil {
			return err
		}
	}
	if r, ok := m["required"]; ok {
		if _, ok := stringList(r); !ok {
			return fmt.Errorf("schema at %q: required must be a list of strings", at)
		}
	}
	for _, k := range subschemaKeys {
		if sub, ok := m[k]; ok {
			if err := v.scan(sub, at+"/"+k, false); err != nil {
				return err
			}
		}
	}
	for _, k := range schemaMapKeys {
		sub, ok := m[k]
		if !ok {
			continue
		}
		mm, ok := sub.(map[string]any)
		if !ok {
			return fmt.Errorf("schema at %q: %s must be an object", at, k)
		}
		for name, s := range mm {
			if k == "patternProperties" {
				if err := v.compilePattern(name, at+"/"+k); err != nil {
					return err
				}
			}
			if err := v.scan(s, at+"/"+k+"/"+escapePointer(name), false); err != nil {
				return err
			}
		}
	}
	for _, k := range schemaListKeys {
		sub, ok := m[k]
		if !ok {
			continue
		}
		l, ok := sub.([]any)
		if !ok {
			return fmt.Errorf("schema at %q: %s must be a list of schemas", at, k)
		}
		for i, s := range l {
			if err := v.scan(s, at+"/"+k+"/"+strconv.Itoa(i), false); err != nil {
				return err
			}
		}
	}
	if items, ok := m["items"]; ok {
		if l, ok := items.([]any); ok {
			for i, s := range l {
				if err := v.scan(s, at+"/items/"+strconv.Itoa(i), false); err != nil {
					return err
				}
			}
		} else if err := v.scan(items, at+"/items", false); err != nil {
			return err
		}
	}
	if deps, ok := m["dependencies"].(map[string]any); ok {
		for name, d := range deps {
			if _, isList := d.([]any); !isList {
				if err := v.scan(d, at+"/dependencies/"+escapePointer(name), false); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkRefs resolves every $ref once, so a dangling or external reference
// fails at compile time rather than at the first call.
func (v *validator) checkRefs(s any) error {
	var err error
	walkSchemas(s, func(m map[string]any) bool {
		if r, ok := m["$ref"].(string); ok {
			if _, e := v.resolve(r); e != nil {
				err = e
				return false
			}
		}
		return true
	})
	return err
}

// walkSchemas calls f on every schema object below and including s until f
// returns false.
func walkSchemas(s any, f func(map[string]any) bool) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return true
	}
	if !f(m) {
		return false
	}
	for _, k := range subschemaKeys {
		if !walkSchemas(m[k], f) {
			return false
		}
	}
	for _, k := range schemaMapKeys {
		mm, _ := m[k].(map[string]any)
		for _, s := range mm {
			if !walkSchemas(s, f) {
				return false
			}
		}
	}
	for _, k := range schemaListKeys {
		l, _ := m[k].([]any)
		for _, s := range l {
			if !walkSchemas(s, f) {
				return false
			}
		}
	}
	if l, ok := m["items"].([]any); ok {
		for _, s := range l {
			if !walkSchemas(s, f) {
				return false
			}
		}
	} else if !walkSchemas(m["items"], f) {
		return false
	}
	if deps, ok := m["dependencies"].(map[string]any); ok {
		for _, d := range deps {
			if !walkSchemas(d, f) {
				return false
			}
		}
	}
	return true
}

func (v *validator) compilePattern(p any, at string) error {
	s, ok := p.(string)
	if !ok {
		return fmt.Errorf("schema at %q: the pattern must be a string", at)
	}
	if _, done := v.re[s]; done {
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return fmt.Errorf("schema at %q: pattern %q: %w", at, s, err)
	}
	v.re[s] = re
	return nil
}

var typeNames = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"null": true, "boolean": true, "object": true, "array": true, "number": true, "integer": true, "string": true}
})

func checkType(t any, at string) error {
	names, ok := stringList(t)
	if s, isString := t.(string); isString {
		names, ok = []string{s}, true
	}
	if !ok {
		return fmt.Errorf("schema at %q: type must be a string or a list of strings", at)
	}
	for _, n := range names {
		if !typeNames()[n] {
			return fmt.Errorf("schema at %q: unknown type %q", at, n)
		}
	}
	return nil
}

// resolve finds the schema a $ref names: "#" plus a JSON pointer, "#" plus
// an anchor, or an $id of the document (with an optional fragment).
// Anything else would need a file or the network and is refused.
func (v *validator) resolve(ref string) (any, error) {
	base, frag, _ := strings.Cut(ref, "#")
	target := v.root
	if base != "" {
		t, ok := v.ids[base]
		if !ok {
			return nil, fmt.Errorf("schema refers to %s: external references are not allowed", ref)
		}
		target = t
	}
	if frag == "" {
		return target, nil
	}
	if !strings.HasPrefix(frag, "/") {
		if t, ok := v.ids["#"+frag]; ok {
			return t, nil
		}
		return nil, fmt.Errorf("$ref %q: no such anchor", ref)
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok, err := url.PathUnescape(tok)
		if err != nil {
			return nil, fmt.Errorf("$ref %q: %w", ref, err)
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch t := target.(type) {
		case map[string]any:
			next, ok := t[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %q: nothing at %q", ref, tok)
			}
			target = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(t) {
				return nil, fmt.Errorf("$ref %q: no item %q", ref, tok)
			}
			target = t[i]
		default:
			return nil, fmt.Errorf("$ref %q: nothing at %q", ref, tok)
		}
	}
	if _, ok := target.(bool); !ok {
		if _, ok := target.(map[string]any); !ok {
			return nil, fmt.Errorf("$ref %q does not name a schema", ref)
		}
	}
	return target, nil
}

// validate appends to out every violation of value x (at instance pointer
// ptr) against schema s.
func (v *validator) validate(s, x any, ptr string, depth int, out *[]Violation) {
	add := func(format string, args ...any) {
		*out = append(*out, Violation{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	if depth > maxDepth {
		add("the schema nests deeper than %d levels here", maxDepth)
		return
	}
	if b, ok := s.(bool); ok {
		if !b {
			add("no value is allowed here")
		}
		return
	}
	m, _ := s.(map[string]any)
	if r, ok := m["$ref"].(string); ok {
		target, err := v.resolve(r)
		if err != nil {
			add("%v", err)
			return
		}
		v.validate(target, x, ptr, depth+1, out)
		if v.draft7 {
			return // draft-07 ignores the siblings of $ref
		}
	}
	if t, ok := m["type"]; ok && !typeMatches(t, x) {
		add("got %s, want %s", kindOf(x), typeWords(t))
		return
	}
	if c, ok := m["const"]; ok && !equalJSON(c, x) {
		add("value must be %s", jsonText(c))
	}
	if e, ok := m["enum"].([]any); ok {
		found := false
		for _, c := range e {
			if equalJSON(c, x) {
				found = true
				break
			}
		}
		if !found {
			words := make([]string, len(e))
			for i, c := range e {
				words[i] = jsonText(c)
			}
			add("value must be one of %s", strings.Join(words, ", "))
		}
	}
	switch x := x.(type) {
	case json.Number:
		v.number(m, x, add)
	case string:
		v.str(m, x, add)
	case []any:
		v.array(m, x, ptr, depth, out, add)
	case map[string]any:
		v.object(m, x, ptr, depth, out, add)
	}
	v.combinators(m, x, ptr, depth, out, add)
}

func (v *validator) number(m map[string]any, x json.Number, add func(string, ...any)) {
	n, ok := new(big.Rat).SetString(string(x))
	if !ok {
		return
	}
	bound := func(key string) (*big.Rat, bool) {
		b, ok := m[key].(json.Number)
		if !ok {
			return nil, false
		}
		r, ok := new(big.Rat).SetString(string(b))
		return r, ok
	}
	// draft-04 says exclusiveMinimum/exclusiveMaximum as booleans that
	// make minimum/maximum exclusive
	exMin, _ := m["exclusiveMinimum"].(bool)
	exMax, _ := m["exclusiveMaximum"].(bool)
	if b, ok := bound("minimum"); ok && (n.Cmp(b) < 0 || exMin && n.Cmp(b) == 0) {
		if exMin {
			add("must be > %s but found %s", m["minimum"], x)
		} else {
			add("must be >= %s but found %s", m["minimum"], x)
		}
	}
	if b, ok := bound("maximum"); ok && (n.Cmp(b) > 0 || exMax && n.Cmp(b) == 0) {
		if exMax {
			add("must be < %s but found %s", m["maximum"], x)
		} else {
			add("must be <= %s but found %s", m["maximum"], x)
		}
	}
	if b, ok := bound("exclusiveMinimum"); ok && n.Cmp(b) <= 0 {
		add("must be > %s but found %s", m["exclusiveMinimum"], x)
	}
	if b, ok := bound("exclusiveMaximum"); ok && n.Cmp(b) >= 0 {
		add("must be < %s but found %s", m["exclusiveMaximum"], x)
	}
	if b, ok := bound("multipleOf"); ok && b.Sign() > 0 && !new(big.Rat).Quo(n, b).IsInt() {
		add("%s is not a multiple of %s", x, m["multipleOf"])
	}
}

func (v *validator) str(m map[string]any, x string, add func(string, ...any)) {
	n := utf8.RuneCountInString(x)
	if b, ok := count(m["minLength"]); ok && n < b {
		add("length must be >= %d, but got %d", b, n)
	}
	if b, ok := count(m["maxLength"]); ok && n > b {
		add("length must be <= %d, but got %d", b, n)
	}
	if p, ok := m["pattern"].(string); ok && !v.re[p].MatchString(x) {
		add("%q does not match pattern %q", x, p)
	}
}

func (v *validator) array(m map[string]any, x []any, ptr string, depth int, out *[]Violation, add func(string, ...any)) {
	if b, ok := count(m["minItems"]); ok && len(x) < b {
		add("minItems: got %d, want %d", len(x), b)
	}
	if b, ok := count(m["maxItems"]); ok && len(x) > b {
		add("maxItems: got %d, want %d", len(x), b)
	}
	if u, _ := m["uniqueItems"].(bool); u {
	unique:
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				if equalJSON(x[i], x[j]) {
					add("items at %d and %d are equal", i, j)
					break unique
				}
			}
		}
	}
	prefix, _ := m["prefixItems"].([]any)
	rest, hasRest := m["items"]
	if l, ok := rest.([]any); ok { // draft-07 tuple form
		prefix = l
		rest, hasRest = m["additionalItems"]
	}
	for i, e := range x {
		at := ptr + "/" + strconv.Itoa(i)
		if i < len(prefix) {
			v.validate(prefix[i], e, at, depth+1, out)
		} else if hasRest {
			v.validate(rest, e, at, depth+1, out)
		}
	}
	if c, ok := m["contains"]; ok {
		matches := 0
		for _, e := range x {
			if v.valid(c, e, depth) {
				matches++
			}
		}
		lo, hasLo := count(m["minContains"])
		if !hasLo {
			lo = 1
		}
		if matches < lo {
			add("%d items match contains, want at least %d", matches, lo)
		}
		if hi, ok := count(m["maxContains"]); ok && matches > hi {
			add("%d items match contains, want at most %d", matches, hi)
		}
	}
}

func (v *validator) object(m map[string]any, x map[string]any, ptr string, depth int, out *[]Violation, add func(string, ...any)) {
	if b, ok := count(m["minProperties"]); ok && len(x) < b {
		add("minProperties: got %d, want %d", len(x), b)
	}
	if b, ok := count(m["maxProperties"]); ok && len(x) > b {
		add("maxProperties: got %d, want %d", len(x), b)
	}
	if req, ok := stringList(m["required"]); ok {
		var missing []string
		for _, r := range req {
			if _, ok := x[r]; !ok {
				missing = append(missing, strconv.Quote(r))
			}
		}
		if len(missing) == 1 {
			add("missing property %s", missing[0])
		} else if len(missing) > 1 {
			add("missing properties %s", strings.Join(missing, ", "))
		}
	}
	v.dependencies(m, x, ptr, depth, out, add)
	props, _ := m["properties"].(map[string]any)
	pats, _ := m["patternProperties"].(map[string]any)
	extra, hasExtra := m["additionalProperties"]
	names := m["propertyNames"]
	var unexpected []string
	for _, k := range sortedKeys(x) {
		at := ptr + "/" + escapePointer(k)
		if names != nil {
			var sub []Violation
			v.validate(names, k, ptr, depth+1, &sub)
			if len(sub) > 0 {
				add("property name %q is not allowed: %s", k, sub[0].Message)
			}
		}
		matched := false
		if p, ok := props[k]; ok {
			matched = true
			v.validate(p, x[k], at, depth+1, out)
		}
		for pat, p := range pats {
			if v.re[pat].MatchString(k) {
				matched = true
				v.validate(p, x[k], at, depth+1, out)
			}
		}
		if matched || !hasExtra {
			continue
		}
		if b, ok := extra.(bool); ok && !b {
			unexpected = append(unexpected, strconv.Quote(k))
			continue
		}
		v.validate(extra, x[k], at, depth+1, out)
	}
	if len(unexpected) > 0 {
		add("additional properties %s not allowed", strings.Join(unexpected, ", "))
	}
}

func (v *validator) dependencies(m map[string]any, x map[string]any, ptr string, depth int, out *[]Violation, add func(string, ...any)) {
	check := func(deps map[string]any) {
		for _, k := range sortedKeys(deps) {
			if _, present := x[k]; !present {
				continue
			}
			if l, ok := stringList(deps[k]); ok {
				for _, r := range l {
					if _, ok := x[r]; !ok {
						add("property %q requires property %q", k, r)
					}
				}
			} else {
				v.validate(deps[k], x, ptr, depth+1, out)
			}
		}
	}
	for _, key := range []string{"dependentRequired", "dependentSchemas", "dependencies"} {
		if d, ok := m[key].(map[string]any); ok {
			check(d)
		}
	}
}

func (v *validator) combinators(m map[string]any, x any, ptr string, depth int, out *[]Violation, add func(string, ...any)) {
	if l, ok := m["allOf"].([]any); ok {
		for _, s := range l {
			v.validate(s, x, ptr, depth+1, out)
		}
	}
	if l, ok := m["anyOf"].([]any); ok {
		v.alternatives("anyOf", l, x, ptr, depth, out, add, func(n int) bool { return n > 0 })
	}
	if l, ok := m["oneOf"].([]any); ok {
		v.alternatives("oneOf", l, x, ptr, depth, out, add, func(n int) bool { return n == 1 })
	}
	if n, ok := m["not"]; ok && v.valid(n, x, depth) {
		add("value must not match the schema under not")
	}
	if cond, ok := m["if"]; ok {
		branch := "else"
		if v.valid(cond, x, depth) {
			branch = "then"
		}
		if s, ok := m[branch]; ok {
			v.validate(s, x, ptr, depth+1, out)
		}
	}
}

// alternatives checks anyOf/oneOf. When no alternative matches, the
// violations of the one that came closest (fewest violations) are
// reported, or one "got X, want A or B" when every alternative failed on
// its type alone.
func (v *validator) alternatives(key string, l []any, x any, ptr string, depth int, out *[]Violation, add func(string, ...any), ok func(int) bool) {
	var best []Violation
	matches, typeOnly := 0, true
	var wants []string
	for _, s := range l {
		var sub []Violation
		v.validate(s, x, ptr, depth+1, &sub)
		if len(sub) == 0 {
			matches++
			continue
		}
		if len(sub) == 1 && sub[0].Pointer == ptr && strings.HasPrefix(sub[0].Message, "got ") {
			_, want, _ := strings.Cut(sub[0].Message, ", want ")
			wants = append(wants, want)
		} else {
			typeOnly = false
		}
		if best == nil || len(sub) < len(best) {
			best = sub
		}
	}
	if ok(matches) {
		return
	}
	switch {
	case matches > 1:
		add("value matches %d of the %s schemas, want exactly one", matches, key)
	case typeOnly && len(wants) > 0:
		add("got %s, want %s", kindOf(x), strings.Join(wants, " or "))
	default:
		*out = append(*out, best...)
	}
}

// valid reports whether x matches s, without collecting messages.
func (v *validator) valid(s, x any, depth int) bool {
	var sub []Violation
	v.validate(s, x, "", depth+1, &sub)
	return len(sub) == 0
}

func typeMatches(t, x any) bool {
	names, _ := stringList(t)
	if s, ok := t.(string); ok {
		names = []string{s}
	}
	k := kindOf(x)
	for _, n := range names {
		if n == k || n == "number" && k == "integer" {
			return true
		}
	}
	return false
}

func typeWords(t any) string {
	if s, ok := t.(string); ok {
		return s
	}
	names, _ := stringList(t)
	return strings.Join(names, " or ")
}

// kindOf names a decoded value's JSON type; numbers with no fraction are
// integers, as draft 2020-12 says (1.0 is an integer).
func kindOf(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(x)); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

// equalJSON compares decoded JSON values, numbers by value.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, ok1 := new(big.Rat).SetString(string(a))
		y, ok2 := new(big.Rat).SetString(string(b))
		return ok1 && ok2 && x.Cmp(y) == 0
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, x := range a {
			y, ok := b[k]
			if !ok || !equalJSON(x, y) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func jsonText(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

// count reads a non-negative integer keyword value.
func count(x any) (int, bool) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		f, err := n.Float64()
		if err != nil || f != float64(int64(f)) {
			return 0, false
		}
		i = int64(f)
	}
	if i < 0 {
		return 0, false
	}
	return int(min(i, int64(^uint(0)>>1))), true
}

func stringList(x any) ([]string, bool) {
	l, ok := x.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// escapePointer escapes one JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
