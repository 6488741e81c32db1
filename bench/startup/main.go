// Command startup measures the fixed cost of starting lcp: `lcp version`
// against a hello-world Go program built in the same run with the same
// settings, as fresh processes. It builds both twice:
//
//   - "go build": as `go install ./cmd/lcp` builds it (cgo on when a C
//     compiler is present, which links lcp dynamically against libc:
//     package net has a cgo DNS resolver);
//   - "release": as scripts/release.sh builds it (CGO_ENABLED=0,
//     -trimpath, -ldflags "-s -w"), a static binary.
//
// The runs alternate (the order rotating each round) so that a busy
// machine slows every side alike; it prints medians of wall time, CPU
// (user + system) and minor page faults with their range, the binaries'
// sizes, the ratios lcp / hello world, the load average, and which
// package initializers of lcp took the most time (GODEBUG=inittrace=1,
// medians over the runs).
//
//	go run ./bench/startup                  # or bench/startup/run.sh
//	go run ./bench/startup -runs 400
//	go run ./bench/startup -before OLD_LCP  # also time an lcp built earlier, in the same runs
//	go run ./bench/startup -args 'list --json --tools DIR'
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lcptools/lcp/bench/internal/corpus"
)

func main() {
	runs := flag.Int("runs", 200, "alternating runs per side")
	args := flag.String("args", "version", "the lcp command line measured (split at spaces)")
	before := flag.String("before", "", "an lcp binary built earlier, measured in the same runs")
	top := flag.Int("inits", 12, "how many of the slowest package initializers to list")
	flag.Parse()
	if err := run(*runs, strings.Fields(*args), *before, *top); err != nil {
		fmt.Fprintln(os.Stderr, "startup bench:", err)
		os.Exit(1)
	}
}

// build is one way of building a binary.
type build struct {
	name  string
	env   []string
	flags []string
}

var builds = []build{
	{name: "go build"},
	{name: "release", env: []string{"CGO_ENABLED=0"}, flags: []string{"-trimpath", "-ldflags=-s -w"}},
}

const hello = `package main

import "fmt"

func main() { fmt.Println("hello") }
`

// side is one command measured.
type side struct {
	name   string
	cmd    []string
	wall   []time.Duration
	cpu    []time.Duration
	faults []float64
}

func (s *side) once() error {
	cmd := exec.Command(s.cmd[0], s.cmd[1:]...)
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
	s.faults = append(s.faults, float64(minorFaults(cmd.ProcessState)))
	return nil
}

func median[T time.Duration | float64](d []T) T {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/1e6) }

// figure is a median with its range, "12.34 ms (10.01-20.00)".
func figure(d []time.Duration) string {
	return fmt.Sprintf("%s ms (%s-%s)", ms(median(d)), ms(slices.Min(d)), ms(slices.Max(d)))
}

func ratio(num, den []time.Duration) float64 { return median(num).Seconds() / median(den).Seconds() }

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

func goBuild(dir, out string, b build, pkg string) error {
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, b.flags...), pkg)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), b.env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s (%s): %w", pkg, b.name, err)
	}
	return nil
}

func size(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MB", float64(fi.Size())/1e6)
}

func run(runs int, args []string, before string, top int) error {
	if runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", runs)
	}
	if len(args) == 0 {
		return fmt.Errorf("-args is empty: give the lcp command line to measure, e.g. -args version")
	}
	tmp, err := os.MkdirTemp("", "lcp-startup-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	helloDir := filepath.Join(tmp, "hello")
	if err := os.Mkdir(helloDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(helloDir, "main.go"), []byte(hello), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(helloDir, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644); err != nil {
		return err
	}
	root := corpus.RepoRoot()
	type pair struct {
		b          build
		lcp, hello *side
	}
	var pairs []pair
	var sides []*side
	for i, b := range builds {
		lcpBin := filepath.Join(tmp, "lcp-"+strconv.Itoa(i))
		helloBin := filepath.Join(tmp, "hello-"+strconv.Itoa(i))
		if err := goBuild(root, lcpBin, b, "./cmd/lcp"); err != nil {
			return err
		}
		if err := goBuild(helloDir, helloBin, b, "."); err != nil {
			return err
		}
		p := pair{b: b,
			lcp:   &side{name: "lcp " + strings.Join(args, " ") + " (" + b.name + ")", cmd: append([]string{lcpBin}, args...)},
			hello: &side{name: "hello world (" + b.name + ")", cmd: []string{helloBin}},
		}
		fmt.Printf("%-10s lcp %s (%s), hello world %s\n", b.name+":", size(lcpBin), linkage(lcpBin), size(helloBin))
		pairs = append(pairs, p)
		sides = append(sides, p.lcp, p.hello)
	}
	var old *side
	if before != "" {
		old = &side{name: "before: lcp " + strings.Join(args, " "), cmd: append([]string{before}, args...)}
		fmt.Printf("%-10s %s %s (%s)\n", "before:", before, size(before), linkage(before))
		sides = append(sides, old)
	}
	for _, s := range sides {
		if err := s.once(); err != nil { // a warm-up, and a check that it runs
			return err
		}
		s.wall, s.cpu, s.faults = nil, nil, nil
	}

	fmt.Printf("load average before: %s\n", loadavg())
	for i := range runs {
		for k := range sides {
			if err := sides[(i+k)%len(sides)].once(); err != nil {
				return err
			}
		}
	}
	fmt.Printf("\n%d alternating runs per side; median (min-max)\n", runs)
	fmt.Printf("%-44s %26s %26s %14s\n", "", "wall", "CPU (user+sys)", "minor faults")
	for _, s := range sides {
		fmt.Printf("%-44s %26s %26s %14.0f\n", s.name, figure(s.wall), figure(s.cpu), median(s.faults))
	}
	fmt.Println()
	for _, p := range pairs {
		fmt.Printf("%s: lcp / hello world: %.2fx wall, %.2fx CPU, %.2fx page faults (goal: <= 1.5x wall)\n",
			p.b.name, ratio(p.lcp.wall, p.hello.wall), ratio(p.lcp.cpu, p.hello.cpu), median(p.lcp.faults)/median(p.hello.faults))
	}
	if old != nil {
		fmt.Printf("before / lcp (go build): %.2fx wall, %.2fx CPU\n", ratio(old.wall, pairs[0].lcp.wall), ratio(old.cpu, pairs[0].lcp.cpu))
	}
	if top > 0 {
		if err := inits(pairs[len(pairs)-1].lcp.cmd, min(runs, 21), top); err != nil {
			return err
		}
	}
	fmt.Printf("\nload average after: %s (%d CPUs)\n", loadavg(), runtime.NumCPU())
	return nil
}

// linkage says whether a binary needs the dynamic loader (it has an
// ELF interpreter): such a start maps libc and runs its initialisation
// first.
func linkage(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "?"
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	if bytes.Contains(head[:n], []byte("/ld-linux")) || bytes.Contains(head[:n], []byte("ld64.so")) {
		return "dynamic"
	}
	return "static"
}

// inits runs the command with GODEBUG=inittrace=1 and prints the
// package initializers that took the most time (medians over n runs),
// and their total.
func inits(cmdline []string, n, top int) error {
	clock := map[string][]float64{}
	bytesOf := map[string]string{}
	for range n {
		cmd := exec.Command(cmdline[0], cmdline[1:]...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("inittrace: %w", err)
		}
		sc := bufio.NewScanner(&stderr)
		for sc.Scan() {
			// init PKG @0.012 ms, 0.003 ms clock, 48 bytes, 2 allocs
			f := strings.Fields(sc.Text())
			if len(f) < 10 || f[0] != "init" {
				continue
			}
			v, err := strconv.ParseFloat(f[4], 64)
			if err != nil {
				continue
			}
			clock[f[1]] = append(clock[f[1]], v)
			bytesOf[f[1]] = f[7] + " B, " + f[9] + " allocs"
		}
	}
	type row struct {
		pkg string
		ms  float64
	}
	var rows []row
	total := 0.0
	for p, v := range clock {
		m := median(v)
		total += m
		rows = append(rows, row{p, m})
	}
	slices.SortFunc(rows, func(a, b row) int {
		if a.ms != b.ms {
			if a.ms > b.ms {
				return -1
			}
			return 1
		}
		return strings.Compare(a.pkg, b.pkg)
	})
	fmt.Printf("\npackage initializers of the release build (GODEBUG=inittrace=1, medians of %d runs): %d packages, %.2f ms in all\n", n, len(rows), total)
	for _, r := range rows[:min(top, len(rows))] {
		fmt.Printf("  %7.3f ms  %-60s %s\n", r.ms, r.pkg, bytesOf[r.pkg])
	}
	return nil
}
