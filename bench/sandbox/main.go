// Command sandbox measures what the kernel sandbox costs, against
// references measured in the same run:
//
//	(a) p50 and p90 of `true` through tool_execute_shell_command in safe
//	    mode (sandboxed, copy-on-write) and in strict mode (sandboxed,
//	    direct writes), against full_access (no sandbox), and safe
//	    without the seccomp filter (LCP_SECCOMP=off); the runs alternate
//	    so that all see the same machine load (-cmd runs another command,
//	    e.g. a loop of system calls, to see the filter's cost per call);
//	(b) the commit of a run that changed one file, and of one that
//	    changed 1,000 files, in a 10,000-file workspace (reading the change
//	    set from the upper layer and applying it as one transaction), with
//	    the apply's syncs against without them (ChangeSet.NoSync);
//	(c) one sandboxed run of /bin/true with the budget on and off (run as a
//	    normal user, the budget's copy-on-write difference is the init's
//	    tmpfs layer), its
//	    wall time and the CPU time of the init (user+system, with the
//	    command it reaped) against /bin/true without the sandbox: the CPU
//	    column is the figure a loaded machine inflates least.
//
// Run it from the repository root on a machine with the sandbox:
//
//	go run ./bench/sandbox [-n 200] [-files 10000] [-changed 1000] [-latency=false] [-commit=false] [-cmd true]
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
	"strings"
	"time"

	"github.com/lcptools/lcp/builtin"
	"github.com/lcptools/lcp/sandbox"
	_ "github.com/lcptools/lcp/sandbox/boot" // the sandbox's init, entered before the heavy packages initialize
	"github.com/lcptools/lcp/tool"
)

func main() {
	sandbox.Main() // first: this binary is also the sandbox's init (sandbox/boot enters it sooner)
	n := flag.Int("n", 200, "calls per mode")
	files := flag.Int("files", 10000, "files in the commit benchmark's workspace")
	lat := flag.Bool("latency", true, "measure the shell tool's latency too")
	command := flag.String("cmd", "true", "the command the latency benchmark runs")
	changed := flag.Int("changed", 1000, "files changed in the commit benchmark's second case (0: none)")
	doCommit := flag.Bool("commit", true, "measure the commit too")
	flag.Parse()
	if st := sandbox.Probe(); !st.Available {
		log.Fatalf("no sandbox here: %s", st.Reason)
	}
	fmt.Printf("load average at the start: %s\n", loadavg())
	if *lat {
		latency(*n, *command)
	}
	if *doCommit {
		commit(*files, *changed, max(*n/4, 20))
	}
	budget(*n)
	fmt.Printf("load average at the end: %s\n", loadavg())
}

// loadavg returns the 1, 5 and 15 minute load averages, or "unknown".
func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// budget measures one sandboxed run with the budget on and off.
func budget(n int) {
	ws, err := os.MkdirTemp("", "bench-budget-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)
	off := sandbox.Limits{TotalMemory: -1, Disk: -1, Processes: -1, WallTime: -1}
	type variant struct {
		name   string
		mode   sandbox.Mode
		limits sandbox.Limits
	}
	vs := []variant{{"copy-on-write, budget on", sandbox.CopyOnWrite, sandbox.Limits{}}, {"copy-on-write, budget off", sandbox.CopyOnWrite, off},
		{"write, budget on", sandbox.Write, sandbox.Limits{}}, {"write, budget off", sandbox.Write, off}}
	times := map[string][]time.Duration{}
	load0 := loadAvg()
	// cpus are the user+system times of the process lcp started (the
	// init, with the command it reaped): the sandbox's own work, which a
	// loaded machine inflates far less than the wall time. The reference
	// is /bin/true started without the sandbox, in the same rounds.
	cpus := map[string][]time.Duration{}
	for i := 0; i < n+5; i++ {
		plain := exec.Command("/bin/true")
		if err := plain.Run(); err != nil {
			log.Fatal(err)
		}
		if i >= 5 {
			cpus["plain"] = append(cpus["plain"], plain.ProcessState.UserTime()+plain.ProcessState.SystemTime())
		}
		// Each round starts with another variant: none always follows
		// the same one.
		for k := range vs {
			v := vs[(i+k)%len(vs)]
			start := time.Now()
			cmd := exec.Command("/bin/true")
			cmd.Dir = ws
			cmd.Stderr = os.Stderr
			box, err := sandbox.Wrap(cmd, &sandbox.Policy{Workspace: ws, Mode: v.mode, Limits: v.limits, Env: []string{"PATH=/usr/bin:/bin"}})
			if err != nil {
				log.Fatal(err)
			}
			err = cmd.Start()
			box.Started()
			if err != nil {
				log.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				log.Fatalf("%s: %v", v.name, err)
			}
			if r := box.Report(); r.Exceeded != "" || r.SetupErr != nil {
				log.Fatalf("%s: %+v", v.name, r)
			}
			box.Close()
			if i >= 5 {
				times[v.name] = append(times[v.name], time.Since(start))
				cpus[v.name] = append(cpus[v.name], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			}
		}
	}
	fmt.Printf("one sandboxed run of /bin/true, %d runs each (alternating, each round starting with the next), accounting %s, uid %d, load %s -> %s:\n",
		n, sandbox.Accounting(), os.Getuid(), load0, loadAvg())
	if os.Getuid() != 0 {
		fmt.Println("  (lcp is not root: no control group; copy-on-write with the budget on has the init's tmpfs layer of the disk budget, off keeps the layer in the temporary folder)")
	}
	for i, v := range vs {
		ref := pct(times[vs[i|1].name], 50)
		p50 := pct(times[v.name], 50)
		fmt.Printf("  %-26s p50 %7.2f ms  p90 %7.2f ms  (%.2fx budget off, %+.2f ms)  CPU of the init p50 %5.2f ms\n", v.name, ms(p50), ms(pct(times[v.name], 90)),
			float64(p50)/float64(ref), ms(p50-ref), ms(pct(cpus[v.name], 50)))
	}
	fmt.Printf("  %-26s CPU p50 %5.2f ms (the reference of the CPU column)\n", "/bin/true, no sandbox", ms(pct(cpus["plain"], 50)))
}

// latency measures a command (`true` by default) through the shell tool
// at three levels, and safe without the seccomp filter.
func latency(n int, command string) {
	ws, err := os.MkdirTemp("", "bench-sandbox-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)
	// "safe-noseccomp" is safe with LCP_SECCOMP=off: the filter's cost.
	levels := []string{"full_access", "safe", "safe-noseccomp", "strict"}
	sets := map[string]tool.Toolset{}
	for _, l := range levels {
		ts, err := builtin.New(&builtin.Options{Workspace: ws, Configs: map[string]map[string]any{
			builtin.SystemShell: {"autonomy_level": strings.TrimSuffix(l, "-noseccomp")}}})
		if err != nil {
			log.Fatal(err)
		}
		defer ts.Close()
		sets[l] = ts
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	opts := &tool.CallOptions{Confirm: func(context.Context, *tool.Request) (tool.Decision, string) { return tool.Allow, "" }}
	times := map[string][]time.Duration{}
	for i := 0; i < n+5; i++ {
		for _, l := range levels {
			if l == "safe-noseccomp" {
				os.Setenv("LCP_SECCOMP", "off")
			}
			start := time.Now()
			res, err := tool.Call(context.Background(), sets[l], "tool_execute_shell_command", args, opts)
			d := time.Since(start)
			os.Unsetenv("LCP_SECCOMP")
			if err != nil || !res.Success {
				log.Fatalf("%s: %v %+v", l, err, res)
			}
			if i >= 5 { // warm-up
				times[l] = append(times[l], d)
			}
		}
	}
	ref := pct(times["full_access"], 50)
	fmt.Printf("`%s` through tool_execute_shell_command, %d calls each (alternating):\n", command, n)
	for _, l := range levels {
		p50, p90 := pct(times[l], 50), pct(times[l], 90)
		fmt.Printf("  %-15s p50 %7.2f ms  p90 %7.2f ms  p50 - full_access %+7.2f ms  (%.1fx)\n", l,
			ms(p50), ms(p90), ms(p50-ref), float64(p50)/float64(ref))
	}
}

// commit measures the commit of copy-on-write runs that changed one file
// and 1,000 files of a large workspace, with the apply's syncs (durable,
// the default) and without them (NoSync), alternating round by round.
func commit(files, changed, rounds int) {
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
	// The middle file (any -files value has one), and the first 1,000.
	mid := files / 2
	one := fmt.Sprintf("d%03d/f%05d.txt", mid/100, mid)
	many := min(changed, files)
	manyCmd := fmt.Sprintf(`i=0; for f in d*/f*.txt; do [ $i -ge %d ] && break; echo changed >> "$f"; i=$((i+1)); done`, many)
	time.Sleep(50 * time.Millisecond) // older than the runs
	cases := []struct {
		n      int
		script string
	}{{1, "echo changed >> " + one}, {many, manyCmd}}
	if many == 0 {
		cases = cases[:1]
	}
	for _, tc := range cases {
		times := map[bool][]time.Duration{}
		for r := range 2 * rounds {
			nosync := r%2 == 1
			times[nosync] = append(times[nosync], commitOnce(ws, tc.script, tc.n, nosync))
			time.Sleep(50 * time.Millisecond) // the next run begins well after this change
		}
		d, n := pct(times[false], 50), pct(times[true], 50)
		fmt.Printf("commit of a run that changed %d file(s) in a %d-file workspace, %d rounds each (alternating):\n", tc.n, files, rounds)
		fmt.Printf("  durable (synced)  p50 %7.2f ms  p90 %7.2f ms  (%.2fx the unsynced apply)\n", ms(d), ms(pct(times[false], 90)), float64(d)/float64(n))
		fmt.Printf("  NoSync            p50 %7.2f ms  p90 %7.2f ms\n", ms(n), ms(pct(times[true], 90)))
	}
}

// commitOnce runs script in a copy-on-write sandbox over ws and returns
// how long reading and applying its change set took.
func commitOnce(ws, script string, want int, nosync bool) time.Duration {
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = ws
	box, err := sandbox.Wrap(cmd, &sandbox.Policy{Workspace: ws, Mode: sandbox.CopyOnWrite, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		log.Fatal(err)
	}
	defer box.Close()
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
	cs.NoSync = nosync
	out := cs.Apply(func(*sandbox.Change) bool { return true }, nil)
	d := time.Since(start)
	if len(out.Applied) != want {
		log.Fatalf("applied %d, conflicts %v, failed %v", len(out.Applied), out.Conflicts, out.Failed)
	}
	return d
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadAvg is the machine's load average over one minute.
func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
