// Command worker measures the Python worker runtime against in-process
// Python, in one run, side by side:
//
//	(a) warm round trip of a trivial tool through worker.Pool (and the
//	    §7 normalizer), and through the engine's API (lcp.New and
//	    ExecuteTool), vs the same call made in-process by ref.py;
//	(b) two CPU-bound calls at once on two worker processes vs one Python
//	    process running them in two threads;
//	(c) cold start: the first call of a library.
//
// The pool and the reference run in alternating batches, so that both see
// the same machine load. Run it from the repository root:
//
//	go run ./bench/worker
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/sandbox"
	_ "github.com/lcptools/lcp/sandbox/boot" // the sandbox's init, entered before the heavy packages initialize
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

const tools = `
def tool_echo(x: int = 0):
    """Returns its argument."""
    return {"success": True, "output": x}

def tool_cpu(n: int = 3000000):
    """Burns CPU."""
    s = 0
    for i in range(n):
        s += i * i
    return s
`

// ref drives ref.py, the in-process reference.
type ref struct {
	in  io.WriteCloser
	out *bufio.Scanner
	cmd *exec.Cmd
}

func startRef(python, benchDir, workerDir, lib string) *ref {
	cmd := exec.Command(python, filepath.Join(benchDir, "ref.py"), workerDir, lib)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 64<<20)
	return &ref{in: in, out: sc, cmd: cmd}
}

func (r *ref) ask(mode string, n int) (lat []time.Duration, wall time.Duration) {
	fmt.Fprintf(r.in, "%s %d\n", mode, n)
	if !r.out.Scan() {
		log.Fatal("ref.py stopped")
	}
	var res struct {
		LatencyUS []float64 `json:"latency_us"`
		WallS     float64   `json:"wall_s"`
	}
	if err := json.Unmarshal(r.out.Bytes(), &res); err != nil {
		log.Fatal(err)
	}
	for _, us := range res.LatencyUS {
		lat = append(lat, time.Duration(us*float64(time.Microsecond)))
	}
	return lat, time.Duration(res.WallS * float64(time.Second))
}

func (r *ref) close() {
	r.in.Close()
	r.cmd.Wait()
}

// pingPong is the floor of any call that crosses to another Python
// process: a frame written to a pipe, a Python loop that reads it and
// writes it back, and the Go side woken to read the reply. No decoding,
// no tool: two process wake-ups and four system calls.
type pingPong struct {
	in, out *os.File
	cmd     *exec.Cmd
	frame   []byte
	buf     []byte
}

const pingPongLoop = `import os
while True:
    b = os.read(0, 65536)
    if not b:
        break
    os.write(1, b)
`

func startPingPong(python string) *pingPong {
	inR, inW, err := os.Pipe()
	if err != nil {
		log.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(python, "-c", pingPongLoop)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	inR.Close()
	outW.Close()
	// About the size of a warm call's request frame.
	frame := []byte(`{"id":12345,"op":"call","library":"/tmp/lcp-bench-worker/tools/bench_tools.py","function":"tool_echo","args":{"x":1234},"workspace":"/tmp/lcp-bench-worker/ws"}` + "\n")
	return &pingPong{in: inW, out: outR, cmd: cmd, frame: frame, buf: make([]byte, 65536)}
}

func (p *pingPong) call() time.Duration {
	t0 := time.Now()
	if _, err := p.in.Write(p.frame); err != nil {
		log.Fatal(err)
	}
	for n := 0; n < len(p.frame); {
		k, err := p.out.Read(p.buf)
		if err != nil {
			log.Fatal(err)
		}
		n += k
	}
	return time.Since(t0)
}

func (p *pingPong) close() {
	p.in.Close()
	p.cmd.Wait()
	p.out.Close()
}

func main() {
	sandbox.Main() // first: this binary is also the sandbox's init (sandbox/boot enters it sooner)
	n := flag.Int("n", 5000, "warm calls measured for (a), in 10 batches")
	rounds := flag.Int("rounds", 6, "rounds of two CPU-bound calls for (b)")
	python := flag.String("python", "python3", "interpreter")
	flag.Parse()
	log.SetFlags(0)

	_, self, _, _ := runtime.Caller(0)
	benchDir := filepath.Dir(self)
	workerDir := filepath.Join(benchDir, "..", "..", "worker")
	tmp, err := os.MkdirTemp("", "lcp-bench-worker")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	libDir := filepath.Join(tmp, "tools")
	if err := os.Mkdir(libDir, 0o755); err != nil {
		log.Fatal(err)
	}
	libPath := filepath.Join(libDir, "bench_tools.py")
	if err := os.WriteFile(libPath, []byte(tools), 0o644); err != nil {
		log.Fatal(err)
	}
	ws := filepath.Join(tmp, "ws")
	os.Mkdir(ws, 0o755)
	lib := worker.Library{Path: libPath, Stem: "bench_tools"}
	ctx := context.Background()
	r := startRef(*python, benchDir, workerDir, libPath)
	defer r.close()

	fmt.Printf("lcp worker benchmark — %s, GOMAXPROCS=%d, %d CPUs\n\n", runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU())

	// (a) warm round trip: pool and reference in alternating batches.
	single := worker.NewPool(&worker.Options{Python: *python})
	defer single.Close()
	callEcho := func(p *worker.Pool, i int) time.Duration {
		t0 := time.Now()
		rep, err := p.Call(ctx, &worker.Request{Workspace: ws, Library: lib, Function: "tool_echo",
			Args: json.RawMessage(fmt.Sprintf(`{"x":%d}`, i))}, nil)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := tool.Normalize(rep.Value); err != nil {
			log.Fatal(err)
		}
		return time.Since(t0)
	}
	eng, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{libDir}, Workspace: ws, Python: *python})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	callEngine := func(i int) time.Duration {
		t0 := time.Now()
		res := eng.ExecuteTool(ctx, "tool_echo", json.RawMessage(fmt.Sprintf(`{"x":%d}`, i)))
		d := time.Since(t0)
		if !res.Success {
			log.Fatalf("engine call: %s", res.Error)
		}
		return d
	}
	pp := startPingPong(*python)
	defer pp.close()
	for i := range 500 {
		callEcho(single, i)
		callEngine(i)
		pp.call()
	}
	r.ask("latency", 500)
	var lat, engLat, refLat, ppLat []time.Duration
	batch := max(*n/10, 1)
	for b := range 10 {
		for i := range batch {
			lat = append(lat, callEcho(single, b*batch+i))
		}
		for i := range batch {
			engLat = append(engLat, callEngine(b*batch+i))
		}
		l, _ := r.ask("latency", batch)
		refLat = append(refLat, l...)
		for range batch {
			ppLat = append(ppLat, pp.call())
		}
	}
	p50, p99 := pct(lat, 50), pct(lat, 99)
	e50, e99 := pct(engLat, 50), pct(engLat, 99)
	r50, r99 := pct(refLat, 50), pct(refLat, 99)
	f50, f99 := pct(ppLat, 50), pct(ppLat, 99)
	fmt.Printf("(a) warm call of a trivial tool, sequential (%d calls each)\n", len(lat))
	fmt.Printf("    %-36s p50 %9s   p99 %9s\n", "worker.Pool.Call + tool.Normalize", p50, p99)
	fmt.Printf("    %-36s p50 %9s   p99 %9s\n", "engine API (lcp.Engine.ExecuteTool)", e50, e99)
	fmt.Printf("    %-36s p50 %9s   p99 %9s\n", "in-process Python (ref.py)", r50, r99)
	fmt.Printf("    %-36s p50 %9s   p99 %9s\n", "pipe ping-pong with Python (floor)", f50, f99)
	fmt.Printf("    ratio pool / in-process              p50 %7.1fx   p99 %7.1fx\n",
		float64(p50)/float64(r50), float64(p99)/float64(r99))
	fmt.Printf("    ratio engine API / in-process        p50 %7.1fx   p99 %7.1fx   (goal: p50 within 3x)\n",
		float64(e50)/float64(r50), float64(e99)/float64(r99))
	fmt.Printf("    ratio floor / in-process             p50 %7.1fx   p99 %7.1fx   (two processes that sleep between frames; spinning sides may do better)\n",
		float64(f50)/float64(r50), float64(f99)/float64(r99))
	fmt.Printf("    engine API over the floor            p50 %9s   (the engine's own part)\n\n", e50-f50)

	// (b) two CPU-bound calls at once, two worker processes.
	pool := worker.NewPool(&worker.Options{Python: *python, Processes: func(worker.Library) int { return 2 }})
	defer pool.Close()
	var wg sync.WaitGroup
	for range 2 { // start both processes
		wg.Go(func() {
			if _, err := pool.Call(ctx, &worker.Request{Workspace: ws, Library: lib, Function: "tool_cpu", Args: json.RawMessage(`{"n": 1000}`)}, nil); err != nil {
				log.Fatal(err)
			}
		})
	}
	wg.Wait()
	pair := func(p *worker.Pool) time.Duration {
		t0 := time.Now()
		for range 2 {
			wg.Go(func() {
				if _, err := p.Call(ctx, &worker.Request{Workspace: ws, Library: lib, Function: "tool_cpu"}, nil); err != nil {
					log.Fatal(err)
				}
			})
		}
		wg.Wait()
		return time.Since(t0)
	}
	pair(single)
	var poolWall, oneWall, refWall time.Duration
	for range *rounds {
		poolWall += pair(pool)
		_, w := r.ask("cpu", 1)
		refWall += w
		oneWall += pair(single)
	}
	calls := float64(2 * *rounds)
	poolTP, oneTP, refTP := calls/poolWall.Seconds(), calls/oneWall.Seconds(), calls/refWall.Seconds()
	fmt.Println("(b) two CPU-bound calls at once (a 3M-iteration loop each)")
	fmt.Printf("    %-36s %6.2f calls/s   (%d calls, %s)\n", "worker.Pool, 2 processes", poolTP, int(calls), poolWall.Round(time.Millisecond))
	fmt.Printf("    %-36s %6.2f calls/s   (%d calls, %s)\n", "in-process Python, 2 threads", refTP, int(calls), refWall.Round(time.Millisecond))
	fmt.Printf("    %-36s %6.2f calls/s   (control: one process, the GIL)\n", "worker.Pool, 1 process", oneTP)
	fmt.Printf("    throughput ratio                     %6.2fx   (goal: at least 1.8x)\n\n", poolTP/refTP)

	// (c) cold start: the first call of a library.
	var cold, coldPool, bare []time.Duration
	for i := range 5 {
		p := filepath.Join(tmp, fmt.Sprintf("cold%d.py", i))
		os.WriteFile(p, []byte(tools), 0o644)
		l := worker.Library{Path: p}
		t0 := time.Now()
		if _, err := single.Call(ctx, &worker.Request{Workspace: ws, Library: l, Function: "tool_echo"}, nil); err != nil {
			log.Fatal(err)
		}
		cold = append(cold, time.Since(t0))

		fresh := worker.NewPool(&worker.Options{Python: *python})
		t0 = time.Now()
		if _, err := fresh.Call(ctx, &worker.Request{Workspace: ws, Library: l, Function: "tool_echo"}, nil); err != nil {
			log.Fatal(err)
		}
		coldPool = append(coldPool, time.Since(t0))
		fresh.Close()

		t0 = time.Now()
		if out, err := exec.Command(*python, "-c", "pass").CombinedOutput(); err != nil {
			log.Fatalf("%v: %s", err, out)
		}
		bare = append(bare, time.Since(t0))
	}
	fmt.Println("(c) cold start: first call of a library (median of 5)")
	fmt.Printf("    %-36s %9s\n", "new library, pool already used", pct(cold, 50))
	fmt.Printf("    %-36s %9s\n", "new pool (with interpreter probe)", pct(coldPool, 50))
	fmt.Printf("    %-36s %9s   (ratio %.1fx)\n", "reference: python3 -c pass", pct(bare, 50), float64(pct(cold, 50))/float64(pct(bare, 50)))
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100].Round(time.Microsecond)
}
