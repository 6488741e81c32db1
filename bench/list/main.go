// Command list measures `lcp list --json --tools DIR` against a reference
// written with Python's own ast module (bench/list/reference_list.py, on
// top of pysrc/testdata/reference_extract.py) that prints the same JSON,
// in one run, on two folders:
//
//   - the top-level standard library of the python3 found (168 files,
//     4.7 MB for Python 3.11), every `def name` renamed `def tool_name`;
//   - 100 generated typical tool files.
//
// Both sides run as fresh processes (start-up included); lcp also runs
// with GOMAXPROCS=1, for the single-threaded ratio, and the 100 files are
// also measured against `lcp version`, the start-up of any lcp command. The outputs are
// compared byte for byte first. The runs alternate (the order rotating
// each round) so that a busy machine slows every side alike; medians of
// the wall and CPU (user + system) times count, with their spread and the
// load average, to tell how noisy the machine was.
//
//	go run ./bench/list                  # or bench/list/run.sh
//	go run ./bench/list -runs 15 -python python3.12
//	go run ./bench/list -corpus DIR      # a folder of your own instead of the standard library
//	go run ./bench/list -before OLD_LCP  # also time an lcp built earlier (both ways), in the same runs
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/lcptools/lcp/bench/internal/corpus"
)

func main() {
	python := flag.String("python", "python3", "Python interpreter of the reference, whose standard library is the corpus")
	runs := flag.Int("runs", 9, "alternating runs per side")
	dir := flag.String("corpus", "", "a flat folder of tool files to use instead of the renamed standard library")
	keep := flag.String("keep", "", "build the binary and the folders in this new directory, and keep them")
	before := flag.String("before", "", "an lcp binary built earlier, measured in the same runs for a before/after comparison")
	flag.Parse()
	if err := run(*python, *runs, *dir, *keep, *before); err != nil {
		fmt.Fprintln(os.Stderr, "list bench:", err)
		os.Exit(1)
	}
}

// side is one command measured.
type side struct {
	name string
	cmd  []string
	env  []string
	wall []time.Duration
	cpu  []time.Duration
}

// once runs the side's command with its output discarded.
func (s *side) once() error {
	cmd := exec.Command(s.cmd[0], s.cmd[1:]...)
	cmd.Env = append(os.Environ(), s.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("%s: %w: %s", s.name, err, stderr.Bytes())
	}
	s.wall = append(s.wall, wall)
	s.cpu = append(s.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	return nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// figure is a median with its range, "123 ms (110-160)".
func figure(d []time.Duration) string {
	ms := func(d time.Duration) string {
		if d < 100*time.Millisecond {
			return fmt.Sprintf("%.1f", float64(d)/1e6)
		}
		return fmt.Sprintf("%.0f", float64(d)/1e6)
	}
	return fmt.Sprintf("%s ms (%s-%s)", ms(median(d)), ms(slices.Min(d)), ms(slices.Max(d)))
}

func ratio(ref, lcp []time.Duration) float64 { return median(ref).Seconds() / median(lcp).Seconds() }

// same runs both commands once and compares their outputs; it returns
// the number of tools and the size of the JSON.
func same(lcp, ref []string) (tools int, size int, err error) {
	a, err := exec.Command(lcp[0], lcp[1:]...).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("lcp list: %w", err)
	}
	b, err := exec.Command(ref[0], ref[1:]...).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("reference: %w", err)
	}
	if !bytes.Equal(a, b) {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		line := bytes.Count(a[:i], []byte("\n")) + 1
		return 0, 0, fmt.Errorf("lcp list and the reference print different JSON (from line %d on): the comparison would be unfair", line)
	}
	return bytes.Count(a, []byte("\n    \"name\": ")), len(a), nil
}

// measure alternates the sides runs times, rotating their order.
func measure(runs int, sides ...*side) error {
	for i := range runs {
		for k := range sides {
			if err := sides[(i+k)%len(sides)].once(); err != nil {
				return err
			}
		}
	}
	return nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func run(python string, runs int, dir, keep, before string) error {
	if runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", runs)
	}
	root := corpus.RepoRoot()
	tmp := keep
	if keep != "" {
		if err := os.Mkdir(keep, 0o755); err != nil {
			return err
		}
	} else {
		var err error
		if tmp, err = os.MkdirTemp("", "lcp-list-bench"); err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
	}
	bin := filepath.Join(tmp, "lcp")
	if err := corpus.BuildLCP(bin); err != nil {
		return err
	}
	var big *corpus.Corpus
	var err error
	if dir == "" {
		dir = filepath.Join(tmp, "stdlib")
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		big, err = corpus.StdlibTopLevel(python, dir)
	} else {
		big, err = corpus.Folder(dir, false)
	}
	if err != nil {
		return err
	}
	small := filepath.Join(tmp, "tools100")
	if err := os.Mkdir(small, 0o755); err != nil {
		return err
	}
	typical, err := corpus.ToolFiles(small, 100)
	if err != nil {
		return err
	}
	script := filepath.Join(root, "bench", "list", "reference_list.py")
	testdata := filepath.Join(root, "pysrc", "testdata")
	lcpCmd := func(d string) []string { return []string{bin, "list", "--json", "--tools", d} }
	refCmd := func(d string) []string { return []string{python, script, testdata, d} }

	fmt.Printf("load average before: %s\n", loadavg())
	for _, c := range []*corpus.Corpus{big, typical} {
		if len(c.Files) == 0 {
			return fmt.Errorf("%s: no .py files", c.Dir)
		}
		tools, size, err := same(lcpCmd(c.Dir), refCmd(c.Dir))
		if err != nil {
			return fmt.Errorf("%s: %w", c.Dir, err)
		}
		fmt.Printf("corpus: %s; %d tools, %.1f MB of JSON, the same bytes on both sides\n", c, tools, float64(size)/1e6)
	}

	lcp := &side{name: "lcp list --json", cmd: lcpCmd(big.Dir)}
	lcp1 := &side{name: "lcp list --json, GOMAXPROCS=1", cmd: lcpCmd(big.Dir), env: []string{"GOMAXPROCS=1"}}
	ref := &side{name: "Python ast reference", cmd: refCmd(big.Dir)}
	bigSides := []*side{lcp, lcp1, ref}
	small100 := &side{name: "lcp list --json", cmd: lcpCmd(typical.Dir)}
	ref100 := &side{name: "Python ast reference", cmd: refCmd(typical.Dir)}
	// lcp version is the floor of any lcp command: the process's start.
	version := &side{name: "lcp version", cmd: []string{bin, "version"}}
	smallSides := []*side{small100, ref100, version}
	var old, old1, old100 *side
	if before != "" {
		oldCmd := func(d string) []string { return []string{before, "list", "--json", "--tools", d} }
		if _, _, err := same(oldCmd(big.Dir), refCmd(big.Dir)); err != nil {
			return fmt.Errorf("-before %s: %w", before, err)
		}
		old = &side{name: "before: lcp list --json", cmd: oldCmd(big.Dir)}
		old1 = &side{name: "before: lcp list --json, GOMAXPROCS=1", cmd: oldCmd(big.Dir), env: []string{"GOMAXPROCS=1"}}
		old100 = &side{name: "before: lcp list --json", cmd: oldCmd(typical.Dir)}
		bigSides = append(bigSides, old, old1)
		smallSides = append(smallSides, old100)
	}
	if err := measure(runs, bigSides...); err != nil {
		return err
	}
	if err := measure(runs, smallSides...); err != nil {
		return err
	}

	fmt.Printf("\n%s, %d alternating runs per side; median (min-max)\n", big.What, runs)
	fmt.Printf("%-40s %24s %24s\n", "", "wall", "CPU (user+sys)")
	for _, s := range bigSides {
		fmt.Printf("%-40s %24s %24s\n", s.name, figure(s.wall), figure(s.cpu))
	}
	fmt.Printf("reference / lcp: %.1fx wall, %.1fx CPU; single-threaded: %.1fx wall, %.1fx CPU (goal: >= 20x wall, >= 15x CPU, >= 15x single-threaded)\n",
		ratio(ref.wall, lcp.wall), ratio(ref.cpu, lcp.cpu), ratio(ref.wall, lcp1.wall), ratio(ref.cpu, lcp1.cpu))
	if old != nil {
		fmt.Printf("reference / before: %.1fx wall, %.1fx CPU; single-threaded: %.1fx wall, %.1fx CPU\n",
			ratio(ref.wall, old.wall), ratio(ref.cpu, old.cpu), ratio(ref.wall, old1.wall), ratio(ref.cpu, old1.cpu))
		fmt.Printf("before / lcp, single-threaded CPU: %.2fx\n", ratio(old1.cpu, lcp1.cpu))
	}

	fmt.Printf("\n100 typical tool files (%.1f MB), %d alternating runs per side; median (min-max)\n", float64(typical.Size)/1e6, runs)
	for _, s := range smallSides {
		fmt.Printf("%-40s %24s %24s\n", s.name, figure(s.wall), figure(s.cpu))
	}
	fmt.Printf("reference / lcp: %.1fx wall, %.1fx CPU\n", ratio(ref100.wall, small100.wall), ratio(ref100.cpu, small100.cpu))
	fmt.Printf("lcp list / lcp version: %.2fx wall, %.2fx CPU (goal: within 3x)\n", ratio(small100.wall, version.wall), ratio(small100.cpu, version.cpu))
	if old100 != nil {
		fmt.Printf("reference / before: %.1fx wall, %.1fx CPU\n", ratio(ref100.wall, old100.wall), ratio(ref100.cpu, old100.cpu))
	}
	fmt.Printf("\nload average after: %s (%d CPUs)\n", loadavg(), numCPU())
	return nil
}

func numCPU() int { return runtime.NumCPU() }
