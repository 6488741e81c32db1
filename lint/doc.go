// Package lint checks LCP tool files against the tool author's pre-flight
// checklist, by static analysis of the parsed source: it reads Python with
// the project's own parser (package pysrc) and never runs it.
//
//	findings := lint.Check("weather.py", src, nil)
//	for _, f := range findings {
//		fmt.Println(f) // weather.py:12:5: error: ... [secret-leak]
//	}
//
// Every finding has a rule id from the rule table (Rules), a severity, a
// line and a column (in Unicode code points) and one sentence on how to
// fix it. The checklist rules are:
//
//   - secret-leak: a secret (a parameter or variable named like a key,
//     token, password or secret, or the answer to a "secret" question)
//     reaches the result the model reads, an exception message, print or
//     a logging call, unmasked;
//   - path-escape: a path made from a parameter is opened, listed, written
//     or removed with no workspace check on the way;
//   - noncanonical-return: a branch returns something other than
//     {"success": ..., "output"/"error": ...};
//   - uncoerced-parameter: a parameter the schema calls a string is used
//     as a number or a boolean before any coercion;
//   - unchecked-answer: a question's answer is used before a None check;
//   - risky-pattern: a process, code, a deletion or the network is used
//     before the confirm handler is asked in the same function;
//   - vague-description: a tool's first docstring paragraph is missing or
//     shorter than four words.
//
// The rules of the reader and of discovery (syntax errors, nested tools,
// undocumented parameters, duplicates, missing paths...) share the table,
// so that `lcp check` reports everything through one type: Run checks what
// a discovery found and turns its diagnostics into findings; WriteText,
// WriteJSON and WriteSARIF print them.
//
// # How the analysis works
//
// Each function is walked once in source order with a small state per
// variable: the facts its value carries (a secret, a path made from a
// parameter, an answer that may be None, a handler) and the shape of the
// value (a dict with which keys, a string...). Branches are walked on
// copies of the state and merged; a branch that returns or raises does
// not reach the merge, so `if answer is None: return ...` checks the
// answer for the code after it. Loops are walked twice. The functions of
// the same module are summarized once (does it ask a question, ask for
// approval, take a sensitive step, check or leak its parameters, what does
// it return) and their summaries stand for them at calls. Nothing else is
// interprocedural: a value that goes through another module, a class or an
// unknown function is not followed, so the rules err on the side of
// silence rather than false alarms.
package lint
