// Command reader measures the Go Python-source reader (package pysrc)
// against the Python reference extractor (pysrc/testdata/reference_extract.py,
// Python's own ast module) on the same corpus, in one run: the standard
// library of the Python found, with every `def name` renamed `def tool_name`.
//
// Both sides run as fresh processes that read the list of files, extract
// every tool and print one JSON line per file, so interpreter and binary
// start-up are included. Each side runs -runs times; the best time counts.
//
//	go run ./bench/reader                 # or bench/reader/run.sh
//	go run ./bench/reader -python python3.12 -runs 5
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/lcptools/lcp/pysrc"
)

func main() {
	extract := flag.Bool("extract", false, "internal: extract the files listed on stdin and print JSON lines")
	python := flag.String("python", "", "Python interpreter of the reference (default: python3.12, else python3)")
	runs := flag.Int("runs", 3, "runs per side; the best counts")
	corpus := flag.String("corpus", "", "directory of .py files to use instead of the renamed standard library")
	flag.Parse()
	if *extract {
		if err := extractMain(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(*python, *runs, *corpus); err != nil {
		fmt.Fprintln(os.Stderr, "reader bench:", err)
		os.Exit(1)
	}
}

// extractMain is the Go side: the same output as the reference.
func extractMain(in io.Reader, out io.Writer) error {
	w := bufio.NewWriter(out)
	defer w.Flush()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		path := sc.Text()
		if path == "" {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := pysrc.ReadFile(path, src)
		status := "ok"
		var tools []*pysrc.Tool
		switch {
		case err != nil:
			status = "skip"
		case f.SyntaxErrors != nil:
			status, tools = "syntax", f.Tools
		default:
			tools = f.Tools
		}
		file, _ := json.Marshal(path)
		fmt.Fprintf(w, `{"file": %s, "status": %q, "tools": [`, file, status)
		for i, t := range tools {
			if i > 0 {
				w.WriteString(", ")
			}
			b, _ := t.MarshalJSON()
			w.Write(b)
		}
		w.WriteString("]}\n")
	}
	return sc.Err()
}

func findPython(name string) (string, error) {
	cands := []string{name}
	if name == "" {
		cands = []string{"python3.12", "/root/.pyenv/versions/3.12.1/bin/python3.12", "python3"}
	}
	for _, c := range cands {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Python interpreter found (tried %v)", cands)
}

var defNameRE = regexp.MustCompile(`(?m)^([ \t]*(?:async[ \t]+)?def[ \t]+)([A-Za-z_]\w*)`)

func buildCorpus(python, dir string) ([]string, int64, error) {
	out, err := exec.Command(python, "-c", `import sysconfig; print(sysconfig.get_paths()["stdlib"])`).Output()
	if err != nil {
		return nil, 0, fmt.Errorf("locating the standard library: %w", err)
	}
	root := strings.TrimSpace(string(out))
	var srcs []string
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".py") && !strings.Contains(path, "site-packages") {
			srcs = append(srcs, path)
		}
		return nil
	})
	sort.Strings(srcs)
	var files []string
	var total int64
	for i, path := range srcs {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		b = defNameRE.ReplaceAll(b, []byte("${1}tool_${2}"))
		dst := filepath.Join(dir, fmt.Sprintf("%05d_%s", i, filepath.Base(path)))
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return nil, 0, err
		}
		files = append(files, dst)
		total += int64(len(b))
	}
	return files, total, nil
}

func timeRun(list string, name string, args ...string) (time.Duration, int, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(list)
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	tools := 0
	for _, line := range strings.Split(string(out), "\n") {
		tools += strings.Count(line, `"input_schema"`) + strings.Count(line, `"_parsed_via_regex_fallback": true}`)
	}
	return d, tools, nil
}

func run(pythonName string, runs int, corpus string) error {
	python, err := findPython(pythonName)
	if err != nil {
		return err
	}
	var files []string
	var size int64
	if corpus != "" {
		filepath.WalkDir(corpus, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".py") {
				files = append(files, path)
				if fi, err := d.Info(); err == nil {
					size += fi.Size()
				}
			}
			return nil
		})
	} else {
		dir, err := os.MkdirTemp("", "lcp-reader-bench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		files, size, err = buildCorpus(python, dir)
		if err != nil {
			return err
		}
	}
	if len(files) == 0 {
		return fmt.Errorf("empty corpus")
	}
	list := strings.Join(files, "\n") + "\n"
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ref := filepath.Join(repoRoot(), "pysrc", "testdata", "reference_extract.py")
	version, _ := exec.Command(python, "--version").Output()
	fmt.Printf("corpus: %d files, %.1f MB (renamed standard library of %s)\n", len(files), float64(size)/1e6, strings.TrimSpace(string(version)))
	best := func(name string, args ...string) (time.Duration, int, error) {
		var b time.Duration
		var tools int
		for i := 0; i < runs; i++ {
			d, n, err := timeRun(list, name, args...)
			if err != nil {
				return 0, 0, err
			}
			if i == 0 || d < b {
				b, tools = d, n
			}
		}
		return b, tools, nil
	}
	goTime, goTools, err := best(self, "-extract")
	if err != nil {
		return err
	}
	pyTime, pyTools, err := best(python, ref, "-")
	if err != nil {
		return err
	}
	fps := func(d time.Duration) float64 { return float64(len(files)) / d.Seconds() }
	fmt.Printf("%-22s %10s %12s %10s\n", "", "time", "files/s", "tools")
	fmt.Printf("%-22s %10s %12.0f %10d\n", "Go pysrc", goTime.Round(time.Millisecond), fps(goTime), goTools)
	fmt.Printf("%-22s %10s %12.0f %10d\n", "Python ast reference", pyTime.Round(time.Millisecond), fps(pyTime), pyTools)
	fmt.Printf("ratio: Go is %.1fx faster (goal: >= 20x)\n", pyTime.Seconds()/goTime.Seconds())
	return nil
}

// repoRoot finds the module root from the working directory.
func repoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
