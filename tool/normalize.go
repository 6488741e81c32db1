package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/lcptools/lcp/internal/jsonscan"
)

// outputKeys are the keys whose value becomes the output, in order, when a
// result object has no "output".
var outputKeys = [...]string{"result", "data", "response", "papers", "content", "text"}

// metaKeys never appear in an output made from the rest of the object.
var metaKeys = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"success": true, "status": true, "status_code": true, "error": true,
		"traceback": true, "return_code": true, "prompt_injection": true,
		ContentKey: true,
	}
})

// Normalize turns a tool's raw return value, as JSON, into a Result by the
// rules of SPEC §7 step 9:
//
//   - a value that is not an object is a success with that value as output;
//   - an object has failed if "success" is false, "status" is error, failure
//     or failed (ignoring case and surrounding space), "return_code" is set
//     and not 0, or "error" is truthy in Python's sense and "success" is
//     not true;
//   - the output is "output" if present, else the first present of result,
//     data, response, papers, content, text, else the object without its
//     meta keys;
//   - every other key rides along in Payload; on failure Error holds the
//     tool's error (a string as is, anything else as compact JSON), else
//     "Tool failed with return_code <n>", else "Tool reported status
//     '<status>'", else "Tool reported failure".
//
// It fails only when raw is not valid JSON.
func Normalize(raw json.RawMessage) (*Result, error) {
	raw = bytes.TrimSpace(raw)
	if !json.Valid(raw) {
		if len(raw) > 0 && raw[0] == '{' {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("normalize: %w", err)
			}
		}
		return nil, errors.New("normalize: the tool's value is not valid JSON")
	}
	return normalizeValid(raw)
}

// NormalizeValid is Normalize for text known to be valid JSON (what
// json.Marshal produced): it skips that check.
func NormalizeValid(raw json.RawMessage) (*Result, error) {
	return normalizeValid(bytes.TrimSpace(raw))
}

func normalizeValid(raw json.RawMessage) (*Result, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return &Result{Success: true, StatusCode: 200, Output: raw}, nil
	}
	fields, err := decodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("normalize: %w", err)
	}
	get := func(k string) (json.RawMessage, bool) {
		for i := len(fields) - 1; i >= 0; i-- { // the last duplicate wins, as in json.loads
			if fields[i].key == k {
				return fields[i].value, true
			}
		}
		return nil, false
	}

	success, hasSuccess := get("success")
	status, hasStatus := get("status")
	rc, hasRC := get("return_code")
	errVal, hasErr := get("error")

	failedStatus := false
	if hasStatus {
		var s string
		if len(status) > 0 && status[0] == '"' && json.Unmarshal(status, &s) == nil {
			switch asciiLower(pyStrip(s)) {
			case "error", "failure", "failed":
				failedStatus = true
			}
		}
	}
	failedRC := hasRC && !isNull(rc) && !isZeroNumber(rc)
	errTruthy := hasErr && truthy(errVal)
	successTrue := hasSuccess && string(success) == "true"
	failed := (hasSuccess && string(success) == "false") || failedStatus || failedRC || (errTruthy && !successTrue)

	res := &Result{Success: !failed, StatusCode: 200}
	if failed {
		res.StatusCode = 500
	}
	if c, ok := get(ContentKey); ok && !isNull(c) {
		blocks, err := ParseContent(c)
		if err != nil {
			return Failure("The tool returned content lcp cannot carry: " + err.Error()), nil
		}
		res.Content = blocks
	}

	if out, ok := get("output"); ok {
		res.Output = out
	} else {
		found := false
		for _, k := range outputKeys {
			if v, ok := get(k); ok {
				res.Output, found = v, true
				break
			}
		}
		if !found {
			res.Output = objectWithout(raw, fields, metaKeys())
			if len(res.Content) > 0 && isEmptyObject(res.Output) {
				// Nothing but blocks: the LLM reads their text.
				res.Output, _ = json.Marshal(TextOf(res.Content))
			}
		}
	}

	for _, f := range fields {
		switch f.key {
		case "output", "success", "status_code", ContentKey:
			continue
		case "error":
			if failed {
				continue
			}
		}
		if res.Payload == nil {
			res.Payload = make(map[string]json.RawMessage, len(fields))
		}
		res.Payload[f.key] = f.value
	}

	if failed {
		switch {
		case errTruthy:
			res.Error = rawText(errVal)
		case failedRC:
			res.Error = "Tool failed with return_code " + rawText(rc)
		case failedStatus:
			var s string
			_ = json.Unmarshal(status, &s)
			res.Error = "Tool reported status '" + s + "'"
		default:
			res.Error = "Tool reported failure"
		}
	}
	return res, nil
}

// NormalizeValue marshals v and normalizes it; a *Result passes through,
// a json.RawMessage is normalized as is, and a Content or []Content is a
// result made of those blocks (ContentResult), checked.
func NormalizeValue(v any) (*Result, error) {
	switch x := v.(type) {
	case Content:
		return NormalizeValue([]Content{x})
	case []Content:
		if err := CheckContent(x); err != nil {
			return Failure("The tool returned content lcp cannot carry: " + err.Error()), nil
		}
		return ContentResult(x...), nil
	case *Result:
		if x == nil {
			return Normalize(json.RawMessage("null"))
		}
		return x, nil
	case json.RawMessage:
		return Normalize(x)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("normalize: %w", err)
	}
	return normalizeValid(raw)
}

type field struct {
	key   string
	value json.RawMessage
}

// decodeObject splits a JSON object into its keys and raw values, in
// order, keeping duplicates.
// The data must be valid JSON.
func decodeObject(data []byte) ([]field, error) {
	fields := make([]field, 0, 8)
	var kerr error
	err := jsonscan.WalkObject(data, func(k, v []byte) bool {
		key, err := jsonscan.UnquoteKey(k)
		if err != nil {
			kerr = err
			return false
		}
		fields = append(fields, field{key, v})
		return true
	})
	if err == nil {
		err = kerr
	}
	if err != nil {
		return nil, err
	}
	return fields, nil
}

// objectWithout writes the fields whose key is not in drop as an object.
// When nothing is dropped or replaced, the original text is returned.
func objectWithout(raw json.RawMessage, fields []field, drop map[string]bool) json.RawMessage {
	clean := true
	for i, f := range fields {
		if drop[f.key] {
			clean = false
			break
		}
		for _, g := range fields[:i] {
			if g.key == f.key {
				clean = false
			}
		}
		if !clean {
			break
		}
	}
	if clean {
		return raw
	}
	var b bytes.Buffer
	b.WriteByte('{')
	seen := make(map[string]int, len(fields))
	kept := make([]field, 0, len(fields))
	for _, f := range fields {
		if drop[f.key] {
			continue
		}
		if i, ok := seen[f.key]; ok { // a later duplicate replaces the value in place
			kept[i].value = f.value
			continue
		}
		seen[f.key] = len(kept)
		kept = append(kept, f)
	}
	for i, f := range kept {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, f.key)
		b.WriteByte(':')
		b.Write(f.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// truthy reports whether a JSON value is true in Python's sense.
func truthy(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case 'n', 'f':
		return false
	case 't':
		return true
	case '"':
		return string(raw) != `""`
	case '[', '{':
		inner := bytes.TrimSpace(raw[1 : len(raw)-1])
		return len(inner) > 0
	}
	return !isZeroNumber(raw)
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// isEmptyObject reports whether raw is the JSON object {}.
func isEmptyObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '{' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0
}

// isZeroNumber reports whether raw is a JSON number equal to zero.
func isZeroNumber(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
		return false
	}
	for _, c := range s {
		switch {
		case c == 'e' || c == 'E':
			return true // the mantissa was all zeros
		case c >= '1' && c <= '9':
			return false
		}
	}
	return true
}

// pyStrip removes what Python's str.strip() removes: Unicode whitespace
// and the ASCII separators U+001C to U+001F.
func pyStrip(s string) string {
	return strings.TrimFunc(s, IsPySpace)
}

// IsPySpace reports whether Python's str.isspace() is true for r.
func IsPySpace(r rune) bool {
	switch r {
	case 0x1c, 0x1d, 0x1e, 0x1f, 0x85:
		return true
	case 0x200b: // ZERO WIDTH SPACE is not whitespace in Python
		return false
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Zs, r)
}

// asciiLower lowercases ASCII letters only. The status words are ASCII and
// no non-ASCII character lowercases to one of them in Python, so this
// decides exactly what Python's str.lower() comparison decides.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
