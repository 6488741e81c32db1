// Command reload measures hot reload: the time from writing a tool file
// to the notifications/tools/list_changed an MCP client gets from an
// engine with Config.Watch (lcp mcp --watch), against the time from the
// same write to the kernel's file event itself (a bare fsnotify watcher
// on the same folder), in one run, alternating. The difference is the
// watcher's quiet period (which waits for an editor's burst of writes to
// settle), re-reading the folder, and the MCP notification.
//
//	go run ./bench/reload [-n 20] [-quiet 100ms]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/sandbox"
	_ "github.com/lcptools/lcp/sandbox/boot" // the sandbox's init, entered before the heavy packages initialize
)

func main() {
	sandbox.Main() // first: this binary is also the sandbox's init (sandbox/boot enters it sooner)
	n := flag.Int("n", 20, "writes measured")
	quiet := flag.Duration("quiet", 100*time.Millisecond, "the watcher's quiet period (Config.WatchQuiet)")
	flag.Parse()
	dir, err := os.MkdirTemp("", "lcp-reload-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "tools.py")
	write := func(i int) {
		src := fmt.Sprintf("def tool_count(n: int):\n    \"\"\"Counts, version %d.\"\"\"\n    return n\n", i)
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	write(0)
	ctx := context.Background()

	// The engine as lcp mcp --watch runs it, and a client.
	var srv *mcp.Server
	eng, err := lcp.New(ctx, &lcp.Config{ToolsFolders: []string{dir}, Watch: true, WatchQuiet: *quiet, Workspace: dir,
		OnChange: func(lcp.Change) { _ = srv.ToolsChanged(ctx) }})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	srv = mcp.NewServer(eng, nil)
	defer srv.Close()
	ct, st := sdk.NewInMemoryTransports()
	go func() { _ = srv.Run(ctx, st) }()
	changed := make(chan time.Time, 16)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- time.Now() },
	}).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		log.Fatal(err)
	}

	// The reference: the kernel's event for the same write.
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		log.Fatal(err)
	}
	defer fw.Close()
	if err := fw.Add(dir); err != nil {
		log.Fatal(err)
	}
	drain := func() {
		for {
			select {
			case <-fw.Events:
			case <-changed:
			case <-time.After(3 * *quiet):
				return
			}
		}
	}
	var reload, kernel []time.Duration
	for i := 1; i <= *n; i++ {
		drain()
		start := time.Now()
		write(i)
		select {
		case <-fw.Events:
			kernel = append(kernel, time.Since(start))
		case <-time.After(5 * time.Second):
			log.Fatal("no file event")
		}
		select {
		case at := <-changed:
			reload = append(reload, at.Sub(start))
		case <-time.After(10 * time.Second):
			log.Fatal("no list_changed")
		}
	}
	mr, mk := median(reload), median(kernel)
	fmt.Printf("write -> list_changed (lcp mcp --watch, quiet %v): median %v of %d (min %v, max %v)\n", *quiet, mr.Round(10*time.Microsecond), *n, slices.Min(reload).Round(10*time.Microsecond), slices.Max(reload).Round(10*time.Microsecond))
	fmt.Printf("write -> kernel file event (reference):           median %v of %d\n", mk.Round(time.Microsecond), *n)
	fmt.Printf("ratio %.0fx the reference; beyond the quiet period: %v\n", float64(mr)/float64(mk), (mr - *quiet).Round(10*time.Microsecond))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
