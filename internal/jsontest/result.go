package jsontest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// ResultRules adjusts CompareResult for cases whose texts hold paths or
// machine-dependent parts.
type ResultRules struct {
	// ErrorContains: the expected error (and output) text only has to be
	// contained in the actual one.
	ErrorContains bool
	// ErrorNonEmpty: any non-empty error text matches.
	ErrorNonEmpty bool
}

// CompareResult compares two LCP result objects by the conformance rules:
// the same set of keys; success and status_code exact; error and output
// texts exact (an error holding JSON compares decoded); traceback and
// _converted only present and non-empty; every other key equal as a JSON
// value. It returns the differences, none when they match.
func CompareResult(got, want []byte, rules ResultRules) []string {
	var g, w map[string]json.RawMessage
	if err := json.Unmarshal(got, &g); err != nil {
		return []string{fmt.Sprintf("result is not a JSON object: %v", err)}
	}
	if err := json.Unmarshal(want, &w); err != nil {
		return []string{fmt.Sprintf("expectation is not a JSON object: %v", err)}
	}
	var diffs []string
	keys := map[string]bool{}
	for k := range g {
		keys[k] = true
	}
	for k := range w {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		gv, gok := g[k]
		wv, wok := w[k]
		if !gok {
			diffs = append(diffs, fmt.Sprintf("missing key %q (want %s)", k, wv))
			continue
		}
		if !wok {
			diffs = append(diffs, fmt.Sprintf("extra key %q = %s", k, gv))
			continue
		}
		switch k {
		case "traceback", "_converted":
			if !nonEmpty(gv) {
				diffs = append(diffs, fmt.Sprintf("%s is empty", k))
			}
			continue
		case "error", "output":
			var gs, ws string
			if json.Unmarshal(wv, &ws) == nil && json.Unmarshal(gv, &gs) == nil && (k == "error" || rules.ErrorContains || rules.ErrorNonEmpty) {
				if !textMatch(gs, ws, rules) {
					diffs = append(diffs, fmt.Sprintf("%s: got %q, want %q", k, gs, ws))
				}
				continue
			}
		}
		if ok, err := Equal(gv, wv); err != nil || !ok {
			diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s", k, gv, wv))
		}
	}
	return diffs
}

func textMatch(got, want string, rules ResultRules) bool {
	switch {
	case got == want:
		return true
	case rules.ErrorNonEmpty:
		return got != ""
	case rules.ErrorContains:
		return strings.Contains(got, want)
	}
	t := strings.TrimSpace(want)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		ok, err := Equal([]byte(got), []byte(want))
		return err == nil && ok
	}
	return false
}

func nonEmpty(raw json.RawMessage) bool {
	v, err := Decode(raw)
	if err != nil {
		return false
	}
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}
