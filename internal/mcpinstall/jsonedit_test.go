package mcpinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const entry = `{"command":"/usr/bin/lcp","args":["mcp"]}`

func TestSetMember(t *testing.T) {
	for _, tt := range []struct {
		name, doc, want string
		replaced        bool
	}{
		{"empty file", "", "{\n  \"mcpServers\": {\n    \"lcp\": {\n      \"command\": \"/usr/bin/lcp\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n", false},
		{"empty object", "{}\n", "{\n  \"mcpServers\": {\n    \"lcp\": {\n      \"command\": \"/usr/bin/lcp\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n", false},
		{"other keys kept, in order, container added last",
			"{\n    \"theme\": \"dark\",\n    \"zoom\": 1.5\n}\n",
			"{\n    \"theme\": \"dark\",\n    \"zoom\": 1.5,\n    \"mcpServers\": {\n        \"lcp\": {\n            \"command\": \"/usr/bin/lcp\",\n            \"args\": [\n                \"mcp\"\n            ]\n        }\n    }\n}\n", false},
		{"a server added after the others",
			"{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\"}\n  },\n  \"x\": [1,2]\n}",
			"{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\"},\n    \"lcp\": {\n      \"command\": \"/usr/bin/lcp\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  },\n  \"x\": [1,2]\n}", false},
		{"an existing entry replaced in place",
			"{\n\t\"mcpServers\": {\n\t\t\"lcp\": {\"command\": \"old\"},\n\t\t\"fs\": {}\n\t}\n}\n",
			"{\n\t\"mcpServers\": {\n\t\t\"lcp\": {\n\t\t\t\"command\": \"/usr/bin/lcp\",\n\t\t\t\"args\": [\n\t\t\t\t\"mcp\"\n\t\t\t]\n\t\t},\n\t\t\"fs\": {}\n\t}\n}\n", true},
		{"an empty container opened up",
			"{\n  \"a\": 1,\n  \"mcpServers\": {}\n}\n",
			"{\n  \"a\": 1,\n  \"mcpServers\": {\n    \"lcp\": {\n      \"command\": \"/usr/bin/lcp\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n", false},
		{"a minified file stays minified",
			`{"a":1,"mcpServers":{"fs":{"command":"npx"}}}`,
			`{"a":1,"mcpServers":{"fs":{"command":"npx"},"lcp":{"command":"/usr/bin/lcp","args":["mcp"]}}}`, false},
		{"a minified file without the container",
			`{"a":1}`,
			`{"a":1,"mcpServers":{"lcp":{"command":"/usr/bin/lcp","args":["mcp"]}}}`, false},
		{"CRLF line ends kept",
			"{\r\n  \"a\": 1\r\n}\r\n",
			"{\r\n  \"a\": 1,\r\n  \"mcpServers\": {\r\n    \"lcp\": {\r\n      \"command\": \"/usr/bin/lcp\",\r\n      \"args\": [\r\n        \"mcp\"\r\n      ]\r\n    }\r\n  }\r\n}\r\n", false},
		{"strings that look like JSON are left alone",
			"{\n  \"note\": \"{\\\"mcpServers\\\": {}}\",\n  \"mcpServers\": {\"lcp\": 1}\n}",
			"{\n  \"note\": \"{\\\"mcpServers\\\": {}}\",\n  \"mcpServers\": {\"lcp\": {\"command\":\"/usr/bin/lcp\",\"args\":[\"mcp\"]}}\n}", true},
		{"a byte-order mark kept", "\ufeff{\"a\":1}", "\ufeff{\"a\":1,\"mcpServers\":{\"lcp\":{\"command\":\"/usr/bin/lcp\",\"args\":[\"mcp\"]}}}", false},
		{"a repeated key: the last one counts, as for decoders",
			"{\n  \"mcpServers\": {\"a\": 1},\n  \"mcpServers\": {\n    \"b\": 2\n  }\n}",
			"{\n  \"mcpServers\": {\"a\": 1},\n  \"mcpServers\": {\n    \"b\": 2,\n    \"lcp\": {\n      \"command\": \"/usr/bin/lcp\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, replaced, err := SetMember([]byte(tt.doc), "mcpServers", "lcp", json.RawMessage(entry))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want || replaced != tt.replaced {
				t.Errorf("got (replaced %v)\n%s\nwant (replaced %v)\n%s", replaced, got, tt.replaced, tt.want)
			}
			checkSet(t, []byte(strings.TrimPrefix(tt.doc, "\ufeff")), []byte(strings.TrimPrefix(string(got), "\ufeff")))
		})
	}
}

// checkSet checks that after is before with mcpServers.lcp set to entry
// and nothing else changed.
func checkSet(t *testing.T, before, after []byte) {
	t.Helper()
	var b, a map[string]any
	if len(strings.TrimSpace(string(before))) == 0 {
		before = []byte("{}")
	}
	if err := json.Unmarshal(before, &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(after, &a); err != nil {
		t.Fatalf("the result is not JSON: %v\n%s", err, after)
	}
	servers, _ := b["mcpServers"].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
	}
	var e any
	_ = json.Unmarshal([]byte(entry), &e)
	servers["lcp"] = e
	b["mcpServers"] = servers
	bj, _ := json.Marshal(b)
	aj, _ := json.Marshal(a)
	if string(bj) != string(aj) {
		t.Errorf("content mismatch:\n got  %s\n want %s", aj, bj)
	}
}

func TestSetMemberRefuses(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"// my servers\n{\"mcpServers\": {}}", "not a JSON object: line 1"},
		{"{\"mcpServers\": {},}", "trailing commas"},
		{"[1, 2]", "the top level is not an object"},
		{"{\"mcpServers\": []}", `"mcpServers" is not an object`},
		{"{\"mcpServers\": null}", `"mcpServers" is not an object`},
		{"{\"a\": 1} {\"b\": 2}", "not a JSON object"},
		{"\"just a string\"", "the top level is not an object"},
	} {
		_, _, err := SetMember([]byte(tt.doc), "mcpServers", "lcp", json.RawMessage(entry))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error with %q", tt.doc, err, tt.want)
		}
		if strings.HasPrefix(tt.want, "not a JSON") && !errors.Is(err, ErrNotJSON) {
			t.Errorf("%q: %v does not wrap ErrNotJSON", tt.doc, err)
		}
	}
}

// FuzzSetMember: on any document, SetMember either refuses or returns
// JSON in which exactly mcpServers.lcp changed.
func FuzzSetMember(f *testing.F) {
	for _, s := range []string{"", "{}", `{"mcpServers":{}}`, "{\n  \"a\": [1, {\"b\": null}],\n  \"mcpServers\": {\n    \"x\": {}\n  }\n}\n", `{"mcpServers":{"lcp":true}}`, "{\"a\":\"\\u00e9\\n\"}", "// c\n{}", "{\"mcpServers\": 5}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, _, err := SetMember(doc, "mcpServers", "lcp", json.RawMessage(entry))
		if err != nil {
			return
		}
		doc, out = bytes.TrimPrefix(doc, bom), bytes.TrimPrefix(out, bom)
		var before map[string]any
		if len(strings.TrimSpace(string(doc))) > 0 && json.Unmarshal(doc, &before) != nil {
			t.Fatalf("accepted a document that is not an object: %q", doc)
		}
		checkSet(t, doc, out)
	})
}
