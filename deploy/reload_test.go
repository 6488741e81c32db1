//go:build linux

package deploy_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcptools/lcp/internal/servetest"
)

var reloadFor = flag.Duration("reload-load", 6*time.Second, "how long TestReloadUnderCalls rewrites its tool file")

// TestReloadUnderCalls rewrites a tool file every 100 ms under `lcp mcp
// --http --watch` while sessions call its tool: each call gets the old
// or the new version's result, or an error that says the library is
// being reloaded; and the server logs no warning storm.
func TestReloadUnderCalls(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("skipping the reload test: python3 is not installed")
	}
	dir := t.TempDir()
	ctx := context.Background()
	bin, err := servetest.Build(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(dir, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(tools, "count.py")
	write := func(i int) {
		src := fmt.Sprintf("def tool_count(n: int):\n    \"\"\"Counts, version %d.\"\"\"\n    return \"v%d:\" + str(n)\n", i, i)
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Error(err)
		}
	}
	write(0)
	srv, err := servetest.Start(bin, []string{"mcp", "--http", "127.0.0.1:0", "--tools", tools, "--watch", "--token", token, "--log-format", "json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Kill)
	client := newLoadClient(16)
	out := newTally()
	stop := time.Now().Add(*reloadFor)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; time.Now().Before(stop); i++ {
			write(i)
			time.Sleep(100 * time.Millisecond) // the rewrite's pace, not a synchronisation
		}
	})
	version := regexp.MustCompile(`v\d+:(\d+)`)
	for s := range 4 {
		wg.Go(func() {
			began := time.Now()
			rs, err := openRaw(ctx, srv.URL, client)
			if err != nil {
				out.add("session not opened", openFailure(err, time.Since(began)))
				return
			}
			for j := 0; time.Now().Before(stop); j++ {
				n := s*100000 + j
				o, detail := rs.call(ctx, "tool_count", map[string]any{"n": n})
				switch {
				case o != gotResult:
				case strings.Contains(detail, `"isError":true`):
					if strings.Contains(detail, "reload") {
						o = "error: being reloaded"
					} else {
						o = "error: other"
					}
				default:
					if m := version.FindStringSubmatch(detail); m == nil || m[1] != fmt.Sprint(n) {
						o = "wrong result"
					}
				}
				out.add(o, detail)
			}
		})
	}
	wg.Wait()
	t.Logf("reload every 100 ms for %s: %s", *reloadFor, out)
	for o, ex := range out.examples {
		t.Logf("%s, e.g. %.300q", o, ex[0])
	}
	for o := range out.counts {
		if o != gotResult && o != "error: being reloaded" {
			t.Errorf("%d calls got %s, e.g. %.300q", out.counts[o], o, out.examples[o])
		}
	}
	var warnings []string
	for _, l := range strings.Split(srv.Stderr(), "\n") {
		if strings.Contains(l, `"level":"WARN"`) {
			warnings = append(warnings, l)
		}
	}
	t.Logf("%d warnings", len(warnings))
	for _, w := range warnings {
		if strings.Contains(w, "list_changed") {
			t.Errorf("warning: %s", w)
		}
	}
}
