package lint

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/tool"
)

// sarifSchema compiles the vendored SARIF 2.1.0 schema (testdata/sarif).
func sarifSchema(t *testing.T) *tool.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "sarif", "sarif-2.1.0-rtm.5.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := tool.CompileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSARIFSchema validates WriteSARIF's output against the official
// schema, and checks what code-scanning services need beyond it: rules with
// help, results with a rule id and index, a level, a location relative to
// the checked folder with a region.
func TestSARIFSchema(t *testing.T) {
	schema := sarifSchema(t)
	root := t.TempDir()
	inside := filepath.Join(root, "sub dir", "wéather.py")
	outside := filepath.Join(t.TempDir(), "other.py")
	findings := []Finding{
		{Severity: Error, Code: "secret-leak", Message: "tool_x puts a secret into its result", Fix: "mask it", File: inside, Line: 8, Column: 40, Tool: "tool_x"},
		{Severity: Warning, Code: "path-escape", Message: "outside", File: outside, Line: 3, Column: 1},
		{Severity: Info, Code: "undocumented-parameter", Message: "no line", File: inside, Line: 2},
		{Severity: Warning, Code: "missing-folder", Message: "tools folder x: no such file", File: filepath.Join(root, "x")},
		{Severity: Error, Code: "toolset-unavailable", Message: "no location at all"},
		{Severity: Warning, Code: "some-new-code", Message: "a code the table does not know", File: inside, Line: 1, Column: 1},
	}
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, findings, SARIFOptions{Root: root, ToolVersion: "v1.2.3"}); err != nil {
		t.Fatal(err)
	}
	if vs := schema.ValidateJSON(buf.Bytes()); vs != nil {
		t.Fatalf("the log does not validate against the SARIF 2.1.0 schema: %v\n%s", vs, buf.String())
	}
	// the schema is not vacuous: a broken log fails
	for _, broken := range []string{
		strings.Replace(buf.String(), `"version": "2.1.0"`, `"version": "2.0.0"`, 1),
		strings.Replace(buf.String(), `"level": "error"`, `"level": "fatal"`, 1),
		strings.Replace(buf.String(), `"startLine": 8`, `"startLine": 0`, 1),
	} {
		if schema.ValidateJSON([]byte(broken)) == nil {
			t.Errorf("a broken log validates")
		}
	}

	var log struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name, Version string
					Rules         []struct {
						ID                   string
						ShortDescription     struct{ Text string }
						Help                 struct{ Text, Markdown string }
						DefaultConfiguration struct{ Level string }
					}
				}
			}
			OriginalURIBaseIDs map[string]struct{ URI string } `json:"originalUriBaseIds"`
			ColumnKind         string
			Results            []struct {
				RuleID    string
				RuleIndex int
				Level     string
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI, URIBaseID string }
						Region           *struct{ StartLine, StartColumn int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("version %q, %d runs", log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	d := run.Tool.Driver
	if d.Name == "" || d.Version != "v1.2.3" || len(d.Rules) < len(Rules) {
		t.Errorf("driver %q %q with %d rules", d.Name, d.Version, len(d.Rules))
	}
	for _, r := range d.Rules {
		if r.ID == "" || r.ShortDescription.Text == "" || r.Help.Text == "" || r.Help.Markdown == "" || r.DefaultConfiguration.Level == "" {
			t.Errorf("rule %+v lacks a description, help or level", r)
		}
	}
	if run.ColumnKind != "unicodeCodePoints" {
		t.Errorf("columnKind %q", run.ColumnKind)
	}
	if base := run.OriginalURIBaseIDs["SRCROOT"].URI; !strings.HasPrefix(base, "file:///") || !strings.HasSuffix(base, "/") {
		t.Errorf("SRCROOT %q is not an absolute directory URI", base)
	}
	if len(run.Results) != len(findings) {
		t.Fatalf("%d results for %d findings", len(run.Results), len(findings))
	}
	for i, res := range run.Results {
		if res.RuleID != findings[i].Code || d.Rules[res.RuleIndex].ID != res.RuleID {
			t.Errorf("result %d: ruleId %q, index %d", i, res.RuleID, res.RuleIndex)
		}
	}
	want := []struct {
		level, uri, base string
		line, col        int
	}{
		{"error", "sub%20dir/w%C3%A9ather.py", "SRCROOT", 8, 40},
		{"warning", "file://" + filepath.ToSlash(outside), "", 3, 1},
		{"note", "sub%20dir/w%C3%A9ather.py", "SRCROOT", 2, 0},
		{"warning", "x", "SRCROOT", 0, 0},
	}
	for i, w := range want {
		res := run.Results[i]
		if res.Level != w.level || len(res.Locations) != 1 {
			t.Errorf("result %d: level %q, %d locations", i, res.Level, len(res.Locations))
			continue
		}
		pl := res.Locations[0].PhysicalLocation
		if pl.ArtifactLocation.URI != w.uri || pl.ArtifactLocation.URIBaseID != w.base {
			t.Errorf("result %d: uri %q base %q, want %q %q", i, pl.ArtifactLocation.URI, pl.ArtifactLocation.URIBaseID, w.uri, w.base)
		}
		if w.line == 0 {
			if pl.Region != nil {
				t.Errorf("result %d: region %+v for a finding without a line", i, pl.Region)
			}
		} else if pl.Region == nil || pl.Region.StartLine != w.line || pl.Region.StartColumn != w.col {
			t.Errorf("result %d: region %+v, want %d:%d", i, pl.Region, w.line, w.col)
		}
	}
	if len(run.Results[4].Locations) != 0 {
		t.Errorf("a finding without a file has a location")
	}
	if !strings.Contains(run.Results[0].Message.Text, "mask it") {
		t.Errorf("the message %q does not carry the fix", run.Results[0].Message.Text)
	}
}

// TestSARIFCorpus validates the log of the whole rule corpus.
func TestSARIFCorpus(t *testing.T) {
	schema := sarifSchema(t)
	var all []Finding
	for _, dir := range []string{"testdata/rules", "testdata/seeds"} {
		_, byFile := checkDir(t, dir)
		for _, fs := range byFile {
			all = append(all, fs...)
		}
	}
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, all, SARIFOptions{Root: "testdata"}); err != nil {
		t.Fatal(err)
	}
	if vs := schema.ValidateJSON(buf.Bytes()); vs != nil {
		t.Fatalf("invalid SARIF: %v", vs)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"uri": "rules/secret-leak/bad.py"`)) {
		t.Errorf("expected a URI relative to testdata")
	}
}
