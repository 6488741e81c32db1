// Command check measures `lcp check` against `lcp list` on the same
// corpus, in one run: the .py files at the top of the standard library of
// the python3 found (168 files, 4.7 MB for Python 3.11), with every
// `def name` renamed `def tool_name` as bench/reader does, so that every
// function is a tool the checklist rules analyse.
//
// Both commands run as fresh processes of the same lcp binary (built
// first), alternating, -runs times each; the best wall and CPU times
// count, and the ratio check/list is printed (goal: at most 2x).
//
//	go run ./bench/check                 # or bench/check/run.sh
//	go run ./bench/check -runs 9 -python python3.12
//	go run ./bench/check -corpus DIR     # any folder of .py files
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/lcptools/lcp/bench/internal/corpus"
)

func main() {
	python := flag.String("python", "python3", "Python interpreter whose standard library is the corpus")
	runs := flag.Int("runs", 5, "runs per command; the best counts")
	corpus := flag.String("corpus", "", "folder of .py files to use instead of the renamed standard library")
	flag.Parse()
	if err := run(*python, *runs, *corpus); err != nil {
		fmt.Fprintln(os.Stderr, "check bench:", err)
		os.Exit(1)
	}
}

type measure struct{ wall, cpu time.Duration }

// timeRun runs lcp once with its output discarded. check exits 1 when it
// finds errors, which is not a failure here.
func timeRun(bin string, args ...string) (measure, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout = nil
	cmd.Stderr = nil
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return measure{}, fmt.Errorf("lcp %s: %w", strings.Join(args, " "), err)
		}
	}
	return measure{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
}

func run(python string, runs int, dir string) error {
	tmp, err := os.MkdirTemp("", "lcp-check-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "lcp")
	if err := corpus.BuildLCP(bin); err != nil {
		return err
	}
	var c *corpus.Corpus
	if dir == "" {
		dir = filepath.Join(tmp, "corpus")
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		c, err = corpus.StdlibTopLevel(python, dir)
	} else {
		c, err = corpus.Folder(dir, false)
	}
	if err != nil {
		return err
	}
	if len(c.Files) == 0 {
		return fmt.Errorf("empty corpus")
	}
	fmt.Printf("corpus: %s\n", c)
	var list, check measure
	better := func(b *measure, m measure, first bool) {
		if first || m.wall < b.wall {
			b.wall = m.wall
		}
		if first || m.cpu < b.cpu {
			b.cpu = m.cpu
		}
	}
	// Alternate the two commands so that a busy machine slows both alike.
	for i := 0; i < runs; i++ {
		l, err := timeRun(bin, "list", "--tools", c.Dir)
		if err != nil {
			return err
		}
		c, err := timeRun(bin, "check", "--tools", c.Dir)
		if err != nil {
			return err
		}
		better(&list, l, i == 0)
		better(&check, c, i == 0)
	}
	fmt.Printf("%-12s %10s %10s\n", "", "wall", "cpu")
	fmt.Printf("%-12s %10s %10s\n", "lcp list", list.wall.Round(time.Millisecond), list.cpu.Round(time.Millisecond))
	fmt.Printf("%-12s %10s %10s\n", "lcp check", check.wall.Round(time.Millisecond), check.cpu.Round(time.Millisecond))
	fmt.Printf("ratio check/list: %.2fx wall, %.2fx CPU (goal: <= 2x), best of %d\n",
		check.wall.Seconds()/list.wall.Seconds(), check.cpu.Seconds()/list.cpu.Seconds(), runs)
	return nil
}
