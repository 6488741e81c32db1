package lint

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/lcptools/lcp/tool"
)

// Finding is one problem found in a tool file or in the inventory.
type Finding struct {
	// Severity is the rule's severity.
	Severity Severity `json:"severity"`
	// Code is the rule id (see Rules).
	Code string `json:"code"`
	// Message says what is wrong, naming the tool and the values involved.
	Message string `json:"message"`
	// Fix says in one sentence how to fix it.
	Fix string `json:"fix,omitempty"`
	// File is the file's path; empty for findings about the inventory.
	File string `json:"file,omitempty"`
	// Line and Column are 1-based; Column counts Unicode code points. Zero
	// when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Tool names the tool concerned, when there is one.
	Tool string `json:"tool,omitempty"`
}

// String formats the finding as a compiler does:
// file:line:col: severity: message [rule-id].
func (f Finding) String() string {
	return f.Format(f.File)
}

// Format is String with the file shown as name.
func (f Finding) Format(name string) string { return string(f.appendText(nil, name)) }

func (f Finding) appendText(b []byte, name string) []byte {
	if name != "" {
		b = append(b, name...)
		if f.Line > 0 {
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(f.Line), 10)
			if f.Column > 0 {
				b = append(b, ':')
				b = strconv.AppendInt(b, int64(f.Column), 10)
			}
		}
		b = append(b, ": "...)
	}
	b = append(b, f.Severity...)
	b = append(b, ": "...)
	b = append(b, f.Message...)
	b = append(b, " ["...)
	b = append(b, f.Code...)
	return append(b, ']')
}

// FromDiagnostic turns a diagnostic of discovery, the binding or the
// inventory into a finding, with the fix of its rule.
func FromDiagnostic(d tool.Diagnostic) Finding {
	f := Finding{Severity: Severity(d.Severity), Code: d.Code, Message: d.Message,
		File: d.File, Line: d.Line, Column: d.Column, Tool: d.Tool}
	if r, ok := rulesByID[d.Code]; ok {
		f.Fix = r.Fix
		if f.Severity.rank() == 0 {
			f.Severity = r.Severity
		}
	}
	if f.Severity.rank() == 0 {
		f.Severity = Warning
	}
	return f
}

// Fails reports whether any finding is at least as serious as threshold.
func Fails(findings []Finding, threshold Severity) bool {
	for _, f := range findings {
		if f.Severity.AtLeast(threshold) {
			return true
		}
	}
	return false
}

// Count returns the number of findings of each severity.
func Count(findings []Finding) map[Severity]int {
	m := map[Severity]int{}
	for _, f := range findings {
		m[f.Severity]++
	}
	return m
}

// sortFindings orders the findings of one file by position, then rule.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Code, b.Code))
	})
}
