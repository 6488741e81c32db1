package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxWireName is the longest function name the LLM APIs accept.
const maxWireName = 64

// validWireName reports whether name is accepted as a function name by
// the LLM APIs and MCP clients: 1 to 64 of A-Z a-z 0-9 _ -.
func validWireName(name string) bool {
	if name == "" || len(name) > maxWireName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// WireNames returns, for tool names in inventory order, names that LLM
// APIs and MCP clients accept as function names (1 to 64 of A-Z a-z 0-9 _
// -), and a map from those names back to the tools' names. A name that
// already qualifies is kept; any other — an MCP tool "alias::tool", a name
// with dots or spaces, a long one — has "::" written "__", every other
// character "_", and a short hash of the original appended when it had to
// be cut or would clash with another name. The mapping is deterministic,
// so hosts can recompute it at every listing.
func WireNames(names []string) (wire []string, back map[string]string) {
	wire = make([]string, len(names))
	back = make(map[string]string, len(names))
	taken := make(map[string]bool, len(names))
	for _, n := range names {
		if validWireName(n) {
			taken[n] = true
		}
	}
	for i, n := range names {
		if validWireName(n) {
			wire[i] = n
			back[n] = n
			continue
		}
		w := sanitize(n)
		if w == "" || len(w) > maxWireName || taken[w] {
			sum := sha256.Sum256([]byte(n))
			suffix := "_" + hex.EncodeToString(sum[:4])
			if len(w) > maxWireName-len(suffix) {
				w = w[:maxWireName-len(suffix)]
			}
			w += suffix
		}
		taken[w] = true
		wire[i] = w
		back[w] = n
	}
	return wire, back
}

func sanitize(name string) string {
	name = strings.ReplaceAll(name, "::", "__")
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
