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
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/lcptools/lcp/bench/internal/corpus"
	"github.com/lcptools/lcp/pysrc"
)

func main() {
	extract := flag.Bool("extract", false, "internal: extract the files listed on stdin and print JSON lines")
	python := flag.String("python", "", "Python interpreter of the reference (default: python3.12, else python3)")
	runs := flag.Int("runs", 3, "runs per side; the best counts")
	corpus := flag.String("corpus", "", "directory of .py files to use instead of the renamed standard library")
	cpuprofile := flag.String("cpuprofile", "", "with -extract: write a CPU profile to this file")
	flag.Parse()
	if *extract {
		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
		if err := extractMain(os.Stdin, os.Stdout); err != nil {
			pprof.StopCPUProfile()
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

// extractMain is the Go side: the same output as the reference. Files
// are read and extracted by one worker per CPU (as discovery may do); the
// output keeps the input order.
func extractMain(in io.Reader, out io.Writer) error {
	var paths []string
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if p := sc.Text(); p != "" {
			paths = append(paths, p)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	results := make([][]byte, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], errs[i] = extractOne(paths[i])
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	w := bufio.NewWriter(out)
	defer w.Flush()
	for i, r := range results {
		if errs[i] != nil {
			return errs[i]
		}
		w.Write(r)
	}
	return nil
}

func extractOne(path string) ([]byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
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
	var b bytes.Buffer
	file, _ := json.Marshal(path)
	fmt.Fprintf(&b, `{"file": %s, "status": %q, "tools": [`, file, status)
	for i, t := range tools {
		if i > 0 {
			b.WriteString(", ")
		}
		j, _ := t.MarshalJSON()
		b.Write(j)
	}
	b.WriteString("]}\n")
	return b.Bytes(), nil
}

func findPython(name string) (string, error) {
	cands := []string{name}
	if name == "" {
		cands = []string{"python3.12", "/root/.pyenv/versions/3.12.1/bin/python3.12", "python3"}
	}
	for _, c := range cands {
		if p, err := exec.LookPath(c); err == nil {
			if exec.Command(p, "-c", "import ast").Run() == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("no Python interpreter found (tried %v)", cands)
}

// measure is the wall time and the CPU time (user + system) of one run.
type measure struct {
	wall, cpu time.Duration
	tools     int
}

func timeRun(list string, name string, args ...string) (measure, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(list)
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		return measure{}, fmt.Errorf("%s: %w", name, err)
	}
	m := measure{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	m.tools = strings.Count(string(out), `{"name": `)
	return m, nil
}

func run(pythonName string, runs int, dir string) error {
	python, err := findPython(pythonName)
	if err != nil {
		return err
	}
	var c *corpus.Corpus
	if dir != "" {
		c, err = corpus.Folder(dir, true)
	} else {
		var tmp string
		if tmp, err = os.MkdirTemp("", "lcp-reader-bench"); err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		c, err = corpus.StdlibAll(python, tmp)
	}
	if err != nil {
		return err
	}
	files := c.Files
	if len(files) == 0 {
		return fmt.Errorf("empty corpus")
	}
	list := strings.Join(files, "\n") + "\n"
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ref := filepath.Join(corpus.RepoRoot(), "pysrc", "testdata", "reference_extract.py")
	fmt.Printf("corpus: %s\n", c)
	// Runs alternate between the two sides so that a busy machine slows
	// both alike; the best wall and CPU times of each side count.
	var goBest, pyBest measure
	better := func(b *measure, m measure, first bool) {
		if first || m.wall < b.wall {
			b.wall = m.wall
		}
		if first || m.cpu < b.cpu {
			b.cpu = m.cpu
		}
		b.tools = m.tools
	}
	for i := 0; i < runs; i++ {
		g, err := timeRun(list, self, "-extract")
		if err != nil {
			return err
		}
		p, err := timeRun(list, python, ref, "-")
		if err != nil {
			return err
		}
		better(&goBest, g, i == 0)
		better(&pyBest, p, i == 0)
	}
	fps := func(d time.Duration) float64 { return float64(len(files)) / d.Seconds() }
	fmt.Printf("%-22s %10s %12s %10s %12s %10s\n", "", "wall", "files/s", "cpu", "files/cpu-s", "tools")
	for _, r := range []struct {
		name string
		m    measure
	}{{"Go pysrc", goBest}, {"Python ast reference", pyBest}} {
		fmt.Printf("%-22s %10s %12.0f %10s %12.0f %10d\n", r.name, r.m.wall.Round(time.Millisecond), fps(r.m.wall),
			r.m.cpu.Round(time.Millisecond), fps(r.m.cpu), r.m.tools)
	}
	fmt.Printf("ratio: Go is %.1fx faster in wall time, %.1fx in CPU time (goal: >= 20x)\n",
		pyBest.wall.Seconds()/goBest.wall.Seconds(), pyBest.cpu.Seconds()/goBest.cpu.Seconds())
	return nil
}
