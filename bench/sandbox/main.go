// Command sandbox measures what the kernel sandbox costs, against
// references measured in the same run:
//
//	(a) p50 and p90 of `true` through tool_execute_shell_command in safe
//	    mode (sandboxed, copy-on-write) and in strict mode (sandboxed,
//	    direct writes), against full_access (no sandbox); the runs
//	    alternate so that all see the same machine load;
//	(b) the commit of a run that changed one file in a 10,000-file
//	    workspace (reading the change set from the upper layer and
//	    applying it), against writing the same file directly (a new inode
//	    renamed into place).
//
// Run it from the repository root on a machine with the sandbox:
//
//	go run ./bench/sandbox [-n 200] [-files 10000]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

func main() {
	sandbox.Main() // first: this binary is also the sandbox's init
	n := flag.Int("n", 200, "calls per mode")
	files := flag.Int("files", 10000, "files in the commit benchmark's workspace")
	flag.Parse()
	if st := sandbox.Probe(); !st.Available {
		log.Fatalf("no sandbox here: %s", st.Reason)
	}
	latency(*n)
	commit(*files, max(*n/4, 20))
}

// latency measures `true` through the shell tool at three levels.
func latency(n int) {
	ws, err := os.MkdirTemp("", "bench-sandbox-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)
	levels := []string{"full_access", "safe", "strict"}
	sets := map[string]tool.Toolset{}
	for _, l := range levels {
		ts, err := builtin.New(&builtin.Options{Workspace: ws, Configs: map[string]map[string]any{
			builtin.SystemShell: {"autonomy_level": l}}})
		if err != nil {
			log.Fatal(err)
		}
		defer ts.Close()
		sets[l] = ts
	}
	args := json.RawMessage(`{"command": "true"}`)
	opts := &tool.CallOptions{Confirm: func(context.Context, *tool.Request) (tool.Decision, string) { return tool.Allow, "" }}
	times := map[string][]time.Duration{}
	for i := 0; i < n+5; i++ {
		for _, l := range levels {
			start := time.Now()
			res, err := tool.Call(context.Background(), sets[l], "tool_execute_shell_command", args, opts)
			d := time.Since(start)
			if err != nil || !res.Success {
				log.Fatalf("%s: %v %+v", l, err, res)
			}
			if i >= 5 { // warm-up
				times[l] = append(times[l], d)
			}
		}
	}
	ref := pct(times["full_access"], 50)
	fmt.Printf("`true` through tool_execute_shell_command, %d calls each (alternating):\n", n)
	for _, l := range levels {
		p50, p90 := pct(times[l], 50), pct(times[l], 90)
		fmt.Printf("  %-12s p50 %7.2f ms  p90 %7.2f ms  p50 - full_access %+7.2f ms  (%.1fx)\n", l,
			ms(p50), ms(p90), ms(p50-ref), float64(p50)/float64(ref))
	}
}

// commit measures the commit of a copy-on-write run that changed one file
// of a large workspace.
func commit(files, rounds int) {
	ws, err := os.MkdirTemp("", "bench-commit-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)
	for i := range files {
		p := filepath.Join(ws, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.txt", i))
		if i%100 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				log.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	target := filepath.Join(ws, "d050", "f05000.txt")
	time.Sleep(50 * time.Millisecond) // older than the runs
	var commits, direct []time.Duration
	for r := range rounds {
		cmd := exec.Command("/bin/sh", "-c", "echo changed >> d050/f05000.txt")
		cmd.Dir = ws
		box, err := sandbox.Wrap(cmd, &sandbox.Policy{Workspace: ws, Mode: sandbox.CopyOnWrite, Env: []string{"PATH=/usr/bin:/bin"}})
		if err != nil {
			log.Fatal(err)
		}
		err = cmd.Start()
		box.Started()
		if err != nil {
			log.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			log.Fatal(err)
		}
		start := time.Now()
		cs, err := box.Changes(nil)
		if err != nil {
			log.Fatal(err)
		}
		out := cs.Apply(func(*sandbox.Change) bool { return true }, nil)
		commits = append(commits, time.Since(start))
		if len(out.Applied) != 1 {
			log.Fatalf("round %d: applied %v, conflicts %v, failed %v", r, out.Applied, out.Conflicts, out.Failed)
		}
		box.Close()

		// The reference: the same change written directly, as a new
		// inode renamed into place.
		content, _ := os.ReadFile(target)
		start = time.Now()
		tmp := target + ".tmp"
		if err := os.WriteFile(tmp, append(content, "changed\n"...), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.Rename(tmp, target); err != nil {
			log.Fatal(err)
		}
		direct = append(direct, time.Since(start))
		time.Sleep(50 * time.Millisecond) // the next run begins well after this change
	}
	fmt.Printf("commit of a run that changed 1 file in a %d-file workspace, %d rounds:\n", files, rounds)
	fmt.Printf("  change set + apply  p50 %6.2f ms  p90 %6.2f ms\n", ms(pct(commits, 50)), ms(pct(commits, 90)))
	fmt.Printf("  direct write        p50 %6.2f ms  (reference; %.1fx)\n", ms(pct(direct, 50)), float64(pct(commits, 50))/float64(pct(direct, 50)))
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
