package discover

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcptools/lcp/internal/jsontest"
	"github.com/lcptools/lcp/tool"
)

// TestLayouts runs the discovery conformance cases (testdata/layouts,
// copied from shared/conformance/layouts; the symlinks case has real
// symbolic links here).
func TestLayouts(t *testing.T) {
	cases, err := filepath.Glob("testdata/layouts/*.expected.json")
	if err != nil || len(cases) < 8 {
		t.Fatalf("cases: %v %v", cases, err)
	}
	for _, exp := range cases {
		name := strings.TrimSuffix(filepath.Base(exp), ".expected.json")
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata/layouts", name)
			var args []string
			if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "args.json")), &args); err != nil {
				t.Fatal(err)
			}
			var opts Options
			for i := 0; i+1 < len(args); i += 2 {
				p := filepath.Join(dir, args[i+1])
				switch args[i] {
				case "--tools":
					opts.Folders = append(opts.Folders, p)
				case "--file":
					opts.Files = append(opts.Files, p)
				default:
					t.Fatalf("unknown arg %q", args[i])
				}
			}
			res := Run(opts)
			var got []json.RawMessage
			for _, tl := range res.Tools {
				info := tl.Info()
				got = append(got, info.Spec(tool.FormatLCP))
			}
			var want []json.RawMessage
			if err := json.Unmarshal(mustRead(t, exp), &want); err != nil {
				t.Fatal(err)
			}
			compareSpecs(t, got, want)
			for _, d := range res.Diagnostics() {
				t.Log(d)
			}
		})
	}
}

// compareSpecs compares tool lists by the conformance rules.
func compareSpecs(t *testing.T, got, want []json.RawMessage) {
	t.Helper()
	names := func(l []json.RawMessage) []string {
		var n []string
		for _, r := range l {
			var s struct{ Name string }
			_ = json.Unmarshal(r, &s)
			n = append(n, s.Name)
		}
		return n
	}
	if len(got) != len(want) {
		t.Fatalf("got %d tools %v, want %d %v", len(got), names(got), len(want), names(want))
	}
	for i := range want {
		var w struct {
			Name     string `json:"name"`
			Fallback bool   `json:"_parsed_via_regex_fallback"`
		}
		_ = json.Unmarshal(want[i], &w)
		if w.Fallback {
			var g struct {
				Name     string `json:"name"`
				Fallback bool   `json:"_parsed_via_regex_fallback"`
			}
			_ = json.Unmarshal(got[i], &g)
			if g != w {
				t.Errorf("tool %d: got %+v, want %+v", i, g, w)
			}
			continue
		}
		gc, err1 := jsontest.Canonical(got[i])
		wc, err2 := jsontest.Canonical(want[i])
		if err1 != nil || err2 != nil || gc != wc {
			t.Errorf("tool %d mismatch:\n got  %s\n want %s", i, gc, wc)
		}
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDiagnostics(t *testing.T) {
	res := Run(Options{
		Folders: []string{"testdata/layouts/missing_paths/nope", "testdata/layouts/missing_paths/present.py", "testdata/layouts/fallback_and_bad_files/tools", "testdata/layouts/dedup_across_folders/first", "testdata/layouts/dedup_across_folders/second"},
		Files:   []string{"testdata/layouts/missing_paths/missing.py", "testdata/layouts"},
	})
	codes := map[string]int{}
	for _, d := range res.Diagnostics() {
		codes[d.Code]++
	}
	for _, c := range []string{"missing-folder", "not-a-folder", "missing-file", "not-a-file", "not-utf8", "syntax-error", "duplicate-tool"} {
		if codes[c] == 0 {
			t.Errorf("no %s diagnostic in %v", c, res.Diagnostics())
		}
	}
}

func TestDefaultLibrary(t *testing.T) {
	calls := 0
	res := Run(Options{Default: func() ([]string, error) {
		calls++
		return []string{"testdata/layouts/primary_and_siblings/tools"}, nil
	}})
	if calls != 1 || len(res.Tools) == 0 {
		t.Fatalf("default not used: %d calls, %d tools", calls, len(res.Tools))
	}
	res = Run(Options{Files: []string{"testdata/layouts/missing_paths/present.py"}, Default: func() ([]string, error) {
		t.Fatal("default used although files were given")
		return nil, nil
	}})
	if len(res.Tools) != 1 {
		t.Fatalf("tools: %d", len(res.Tools))
	}
	tl := res.Tools[0]
	if tl.File.Stem != "present" || tl.File.Group != "present" || !filepath.IsAbs(tl.File.Path) || tl.Info().Library.ID != "present" {
		t.Fatalf("file info: %+v", tl.File)
	}
}

func TestGroups(t *testing.T) {
	res := Run(Options{Folders: []string{"testdata/layouts/primary_and_siblings/tools"}})
	groups := map[string]string{}
	for _, f := range res.Files {
		groups[filepath.Base(f.Path)] = f.Group
	}
	if groups["lib.py"] != "lib" || groups["a_first.py"] != "lib" || groups["aaa.py"] != "aaa" {
		t.Fatalf("groups: %v", groups)
	}
}

// TestLoneSurrogateIsOneReplacement: an escaped lone surrogate in a
// docstring or in library metadata is one U+FFFD in the tool's info (as
// Python's rule gives one per code point), not one per WTF-8 byte.
func TestLoneSurrogateIsOneReplacement(t *testing.T) {
	dir := t.TempDir()
	src := "TOOL_LIBRARY_NAME = \"Lib \\udc00\"\n\ndef tool_s(x: str):\n    \"\"\"Bad \\ud800 here.\n\n    x: the \\udbff value\n    \"\"\"\n"
	if err := os.WriteFile(filepath.Join(dir, "s.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res := Run(Options{Folders: []string{dir}})
	if len(res.Tools) != 1 {
		t.Fatalf("tools: %v", res.Diagnostics())
	}
	info := res.Tools[0].Info()
	if info.Description != "Bad \ufffd here." {
		t.Errorf("description = %q", info.Description)
	}
	if info.Library.Name != "Lib \ufffd" {
		t.Errorf("library name = %q", info.Library.Name)
	}
	spec := string(info.Spec(tool.FormatLCP))
	if n := strings.Count(spec, "\ufffd") + strings.Count(spec, `\ufffd`); n != 2 {
		t.Errorf("%d replacement characters in %s, want 2 (one per surrogate)", n, spec)
	}
}

// TestNotUTF8DiagnosticNamesThePathOnce is a regression test: the
// message used to repeat the path.
func TestNotUTF8DiagnosticNamesThePathOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "latin1.py")
	if err := os.WriteFile(p, []byte("def tool_x():\n    \"\"\"Caf\xe9.\"\"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := Run(Options{Folders: []string{dir}})
	if len(res.Diagnostics()) != 1 || res.Diagnostics()[0].Code != "not-utf8" {
		t.Fatalf("diagnostics = %v", res.Diagnostics())
	}
	if msg := res.Diagnostics()[0].Message; strings.Count(msg, p) != 1 || !strings.Contains(msg, "UTF-8") {
		t.Errorf("message = %q, want the path once", msg)
	}
}

// TestDetectedInteractions: a Python tool declares every interaction, and
// what its source shows it asks is DetectedInteractions; a tool read by
// the fallback is not analysed.
func TestDetectedInteractions(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"asks.py": "def tool_greet(user_interaction_handler=None):\n    return user_interaction_handler({\"type\": \"text\", \"prompt\": \"Title?\"})\n\n" +
			"def tool_add(a: int, b: int):\n    return a + b\n",
		"broken.py": "def tool_broken(user_interaction_handler=None):\n    return (\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := Run(Options{Folders: []string{dir}})
	want := map[string]*tool.Capabilities{
		"tool_greet":  {Text: true, MultilineText: true},
		"tool_add":    {},
		"tool_broken": nil,
	}
	if len(res.Tools) != len(want) {
		t.Fatalf("%d tools: %v", len(res.Tools), res.Diagnostics())
	}
	for _, dt := range res.Tools {
		info := dt.Info()
		if info.Interactions != tool.AllInteractions {
			t.Errorf("%s declares %+v", info.Name, info.Interactions)
		}
		got, w := info.DetectedInteractions, want[info.Name]
		if (got == nil) != (w == nil) || (got != nil && *got != *w) {
			t.Errorf("%s: detected %+v, want %+v", info.Name, got, w)
		}
	}
}
