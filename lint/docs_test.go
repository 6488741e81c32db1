package lint

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocs: docs/check.md has a section for every rule, and its Python
// snippets are true: each "Bad" snippet has a finding of the section's
// rule and each "Good" snippet has no finding at all.
func TestDocs(t *testing.T) {
	raw, err := os.ReadFile("../docs/check.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	sections := map[string]string{}
	parts := regexp.MustCompile(`(?m)^### `).Split(doc, -1)
	for _, p := range parts[1:] {
		id, body, _ := strings.Cut(p, "\n")
		sections[strings.TrimSpace(id)] = body
	}
	snippet := regexp.MustCompile("(?s)(Bad|Good)[^\n]*:\n\n```python\n(.*?)```")
	checked := 0
	for _, r := range Rules {
		body, ok := sections[r.ID]
		if !ok {
			t.Errorf("docs/check.md has no section ### %s", r.ID)
			continue
		}
		if !strings.Contains(doc, "[`"+r.ID+"`](#"+r.ID+")") {
			t.Errorf("the rule table of docs/check.md lacks %s", r.ID)
		}
		if !strings.Contains(body, "**Fix:**") || !strings.Contains(body, "Bad") || !strings.Contains(body, "Good") {
			t.Errorf("section %s lacks a fix, a bad or a good example", r.ID)
		}
		for _, m := range snippet.FindAllStringSubmatch(body, -1) {
			checked++
			findings := Check("notes.py", []byte(m[2]), nil)
			if m[1] == "Good" {
				for _, f := range findings {
					t.Errorf("%s: the good snippet has a finding: %s", r.ID, f)
				}
				continue
			}
			found := false
			for _, f := range findings {
				found = found || f.Code == r.ID
			}
			if !found {
				t.Errorf("%s: the bad snippet has no %s finding: %v", r.ID, r.ID, findings)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d snippets checked", checked)
	}
}
