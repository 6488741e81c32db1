package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"unicode"
)

// SARIFOptions configure WriteSARIF.
type SARIFOptions struct {
	// Root is the checked folder: artifact URIs are relative to it (base id
	// SRCROOT, whose absolute URI the log records). Files outside it get
	// absolute file URIs. Empty: the current directory.
	Root string
	// ToolVersion is lcp's version, when known.
	ToolVersion string
}

// The SARIF 2.1.0 subset lcp writes: what code-scanning services read.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                   `json:"tool"`
	OriginalURIBaseIDs map[string]sarifArtifactLoc `json:"originalUriBaseIds,omitempty"`
	ColumnKind         string                      `json:"columnKind"`
	Results            []sarifResult               `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string          `json:"id"`
	Name                 string          `json:"name"`
	ShortDescription     sarifText       `json:"shortDescription"`
	FullDescription      sarifText       `json:"fullDescription"`
	Help                 sarifText       `json:"help"`
	DefaultConfiguration sarifRuleConfig `json:"defaultConfiguration"`
	Properties           map[string]any  `json:"properties,omitempty"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifactLoc `json:"artifactLocation"`
	Region           *sarifRegion     `json:"region,omitempty"`
}

type sarifArtifactLoc struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// ruleName turns a rule id into the PascalCase name SARIF recommends.
func ruleName(id string) string {
	var b strings.Builder
	up := true
	for _, r := range id {
		if r == '-' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// WriteSARIF writes the findings as a SARIF 2.1.0 log with one run: the
// rule table as tool.driver.rules (with help), one result per finding
// with its rule id, level, message (and fix) and location, URIs relative to
// opts.Root. Columns count Unicode code points (run.columnKind).
func WriteSARIF(w io.Writer, findings []Finding, opts SARIFOptions) error {
	root := opts.Root
	if root == "" {
		root = "."
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("sarif root: %w", err)
	}
	rules := make([]sarifRule, 0, len(Rules))
	index := map[string]int{}
	addRule := func(r Rule) {
		index[r.ID] = len(rules)
		help := r.Finds + ". Fix: " + r.Fix + "."
		md := "**" + r.Title + "**\n\n" + capitalize(r.Finds) + ".\n\n**Fix:** " + r.Fix + "."
		if r.Checklist != "" {
			md += "\n\nChecklist item: " + r.Checklist
		}
		sr := sarifRule{ID: r.ID, Name: ruleName(r.ID),
			ShortDescription:     sarifText{Text: r.Title},
			FullDescription:      sarifText{Text: capitalize(r.Finds) + "."},
			Help:                 sarifText{Text: capitalize(help), Markdown: md},
			DefaultConfiguration: sarifRuleConfig{Level: sarifLevel(r.Severity)},
			Properties:           map[string]any{"tags": ruleTags(r)}}
		rules = append(rules, sr)
	}
	for _, r := range Rules {
		addRule(r)
	}
	results := make([]sarifResult, 0, len(findings))
	for _, f := range findings {
		i, ok := index[f.Code]
		if !ok {
			// a diagnostic code the table does not know yet: describe it
			addRule(Rule{ID: f.Code, Severity: f.Severity, Title: f.Code, Finds: f.Code, Fix: "read the message"})
			i = index[f.Code]
		}
		msg := f.Message
		if f.Fix != "" {
			msg += ". Fix: " + f.Fix + "."
		}
		res := sarifResult{RuleID: f.Code, RuleIndex: i, Level: sarifLevel(f.Severity), Message: sarifText{Text: msg}}
		if f.File != "" {
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: artifactURI(f.File, root)}}
			if f.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line, StartColumn: f.Column}
			}
			res.Locations = []sarifLocation{loc}
		}
		results = append(results, res)
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:               sarifTool{Driver: sarifDriver{Name: "lcp check", Version: opts.ToolVersion, Rules: rules}},
			OriginalURIBaseIDs: map[string]sarifArtifactLoc{"SRCROOT": {URI: fileURI(root, true)}},
			ColumnKind:         "unicodeCodePoints",
			Results:            results,
		}},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(log); err != nil {
		return fmt.Errorf("encoding sarif: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func ruleTags(r Rule) []string {
	tags := []string{"lcp"}
	if r.Checklist != "" {
		tags = append(tags, "checklist")
	}
	if r.ID == "secret-leak" || r.ID == "path-escape" || r.ID == "risky-pattern" {
		tags = append(tags, "security")
	}
	return tags
}

// artifactURI names a file relative to root (with base id SRCROOT) when it
// is inside it, else by an absolute file URI.
func artifactURI(file, root string) sarifArtifactLoc {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return sarifArtifactLoc{URI: fileURI(abs, false)}
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return sarifArtifactLoc{URI: strings.Join(parts, "/"), URIBaseID: "SRCROOT"}
}

// fileURI is the file URI of an absolute path (with a trailing slash for
// a directory, as SARIF requires of base URIs).
func fileURI(path string, dir bool) string {
	p := filepath.ToSlash(path)
	if dir && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}
