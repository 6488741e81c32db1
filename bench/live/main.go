// Command live measures what the live view of lcp call (the status line
// with its spinner, and the tool's printed lines on stderr) costs a call:
// the same `lcp call` runs as a fresh process on a pseudo-terminal (the
// live view on) and with its streams on pipes (the live view off), and,
// for the lines alone, on pipes with -v. The runs alternate, -runs times
// each, so that a noisy machine weighs on every variant alike; the median
// wall times and CPU times (of lcp and of the Python worker it ran, as the
// kernel reports them when lcp exits) and their ratios against the pipes
// are printed (goal: no measurable difference, a ratio within the spread
// of the runs).
//
// Two tools: a trivial one that returns at once (process start, worker
// start, one call: the status line has barely time to show), and a chatty
// one that prints 400 lines over 0.5 s (the status line is drawn and
// every line goes through it).
//
//	go run ./bench/live                # or bench/live/run.sh
//	go run ./bench/live -runs 21
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/creack/pty"

	"github.com/lcptools/lcp/bench/internal/corpus"
)

const toolsPy = `import time


def tool_trivial(x: int = 1):
    """Returns its argument."""
    return x


def tool_chatty(lines: int = 400, seconds: float = 0.5):
    """Prints lines for a while."""
    for i in range(lines):
        print(f"line {i} of {lines}", flush=True)
        time.sleep(seconds / lines)
    return lines
`

func main() {
	runs := flag.Int("runs", 11, "runs per variant; the median counts")
	python := flag.String("python", "", "Python interpreter (default: python3 on PATH)")
	flag.Parse()
	if err := run(*runs, *python); err != nil {
		fmt.Fprintln(os.Stderr, "live bench:", err)
		os.Exit(1)
	}
}

// variant is one way of running lcp call.
type variant struct {
	name  string
	pty   bool
	extra []string
	times []time.Duration
	cpu   []time.Duration
}

func run(runs int, python string) error {
	tmp, err := os.MkdirTemp("", "lcp-live-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "lcp")
	if err := corpus.BuildLCP(bin); err != nil {
		return err
	}
	tools := filepath.Join(tmp, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tools, "bench_tools.py"), []byte(toolsPy), 0o644); err != nil {
		return err
	}
	base := []string{"call", "--tools", tools, "--workspace", tmp}
	if python != "" {
		base = append(base, "--python", python)
	}
	fmt.Printf("lcp call, %d runs per variant, alternating; medians of the wall time (min-max) and of the CPU time of lcp and its worker\n", runs)
	for _, toolName := range []string{"tool_trivial", "tool_chatty"} {
		variants := []*variant{
			{name: "pipes (no live view)"},
			{name: "terminal (spinner + lines)", pty: true},
			{name: "pipes, -v (lines)", extra: []string{"-v"}},
		}
		// One run of each first, not counted: caches warm.
		for _, v := range variants {
			if _, _, err := once(bin, append(append(slices.Clone(base), v.extra...), toolName), v.pty); err != nil {
				return err
			}
		}
		for i := 0; i < runs; i++ {
			for _, v := range variants {
				d, cpu, err := once(bin, append(append(slices.Clone(base), v.extra...), toolName), v.pty)
				if err != nil {
					return err
				}
				v.times = append(v.times, d)
				v.cpu = append(v.cpu, cpu)
			}
		}
		ref, refCPU := median(variants[0].times), median(variants[0].cpu)
		fmt.Printf("\n%s:\n", toolName)
		for _, v := range variants {
			m, c := median(v.times), median(v.cpu)
			fmt.Printf("  %-28s wall %7.1f ms (%.1f-%.1f) ratio %.3f   CPU %6.1f ms ratio %.3f\n", v.name, ms(m),
				ms(slices.Min(v.times)), ms(slices.Max(v.times)), float64(m)/float64(ref), ms(c), float64(c)/float64(refCPU))
		}
	}
	return nil
}

// once runs lcp with its streams on a new pseudo-terminal (read to the
// end, as a terminal would) or on pipes (read and discarded), and returns
// the wall time until it exited and its CPU time.
func once(bin string, args []string, onPty bool) (time.Duration, time.Duration, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=")
	var read func() error
	start := time.Now()
	if onPty {
		ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
		if err != nil {
			return 0, 0, fmt.Errorf("starting lcp on a pseudo-terminal: %w", err)
		}
		defer ptmx.Close()
		done := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, ptmx)
			done <- err
		}()
		read = func() error {
			<-done // EIO once the process has closed the terminal
			return nil
		}
	} else {
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		read = func() error { return nil }
	}
	err := cmd.Wait()
	took := time.Since(start)
	_ = read()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return 0, 0, fmt.Errorf("lcp %v: %w", args, err)
	}
	if err != nil {
		return 0, 0, err
	}
	return took, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
