//go:build linux

package deploy_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/internal/fulltest"
	"github.com/lcptools/lcp/internal/servetest"
)

var loadFor = flag.Duration("replicas-load", 4*time.Second, "how long the replica test runs its load before it drains one replica and kills another")

const token = "replica-test-token-0123456789"

type bearer struct{}

func (bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return http.DefaultTransport.RoundTrip(r)
}

// callRecord is one call as a client saw it.
type callRecord struct {
	replica    string // from the session id
	start, end time.Time
	err        error
}

// TestReplicasBehindNginx runs the recipe: three stateful replicas behind
// nginx with deploy/nginx.conf, a dozen MCP sessions calling a Python
// tool; under load, replica r2 is drained with SIGTERM, then r3 killed
// with SIGKILL. r2's calls in flight all complete and it exits (its drain
// timeout, 60 s, is far above what they take even on a busy machine);
// only r3's calls in flight fail, and each client that reconnects and
// retries once loses nothing; every answer is the caller's own.
func TestReplicasBehindNginx(t *testing.T) {
	fulltest.Only(t, "three replicas behind nginx under -replicas-load of load")
	if _, err := servetest.NginxPath(); err != nil {
		t.Skipf("skipping the replica test: %v", err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("skipping the replica test: python3 is not installed")
	}
	dir := t.TempDir()
	ctx := context.Background()
	bin, err := servetest.Build(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := servetest.WriteFaultyTools(dir)
	if err != nil {
		t.Fatal(err)
	}
	var replicas []*servetest.Proc
	var addrs []string
	for i := 1; i <= 3; i++ {
		port, err := servetest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		p, err := servetest.Start(bin, []string{"mcp", "--http", addr, "--tools", tools, "--token", token,
			"--replica-id", fmt.Sprintf("r%d", i), "--drain-timeout", "60s", "--log-format", "json"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Kill)
		replicas = append(replicas, p)
		addrs = append(addrs, addr)
	}
	recipe, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	port, _ := servetest.FreePort()
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	conf, err := servetest.RenderConfig(string(recipe), listen, addrs)
	if err != nil {
		t.Fatal(err)
	}
	ngx, err := servetest.StartNginx(t.TempDir(), conf, listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ngx.Stop)
	endpoint := "http://" + listen + "/mcp"

	var (
		mu      sync.Mutex
		records []callRecord
		lost    []string
		calls   atomic.Int64
		retried atomic.Int64
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	const clients = 12
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cs *sdk.ClientSession
			connect := func() error {
				if cs != nil {
					cs.Close()
				}
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				var err error
				cs, err = sdk.NewClient(&sdk.Implementation{Name: fmt.Sprintf("client-%d", c), Version: "1"}, nil).
					Connect(cctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{}}, MaxRetries: 1},
						&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // sessions: routed by replica id
				return err
			}
			call := func(nonce string) error {
				rec := callRecord{replica: replicaOf(cs.ID()), start: time.Now()}
				cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "tool_echo", Arguments: map[string]any{"nonce": nonce, "ms": 300 + (c%5)*100}})
				if err == nil && (res.IsError || len(res.Content) == 0) {
					err = fmt.Errorf("tool error %+v", res)
				}
				if err == nil {
					if got := res.Content[0].(*sdk.TextContent).Text; got != "echo:"+nonce {
						err = fmt.Errorf("MISROUTED: %q for %q", got, nonce)
					}
				}
				rec.end, rec.err = time.Now(), err
				mu.Lock()
				records = append(records, rec)
				mu.Unlock()
				return err
			}
			if err := connect(); err != nil {
				mu.Lock()
				lost = append(lost, fmt.Sprintf("client %d cannot connect: %v", c, err))
				mu.Unlock()
				return
			}
			defer func() { cs.Close() }()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				nonce := fmt.Sprintf("c%d-%d", c, i)
				calls.Add(1)
				if err := call(nonce); err == nil {
					continue
				} else if strings.Contains(err.Error(), "MISROUTED") {
					mu.Lock()
					lost = append(lost, err.Error())
					mu.Unlock()
					continue
				}
				// Reconnect (another replica, maybe) and retry once.
				retried.Add(1)
				if err := connect(); err != nil {
					mu.Lock()
					lost = append(lost, fmt.Sprintf("%s: reconnect: %v", nonce, err))
					mu.Unlock()
					return
				}
				if err := call(nonce); err != nil {
					mu.Lock()
					lost = append(lost, fmt.Sprintf("%s: retry: %v", nonce, err))
					mu.Unlock()
				}
			}
		}()
	}

	// Two faults, one after the other (a client is unlucky once, not
	// twice): r2 drains, then r3 dies.
	time.Sleep(*loadFor / 2)
	drainAt := time.Now()
	if err := replicas[1].Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = replicas[1].Wait(90 * time.Second)
	drained := time.Since(drainAt)
	if err != nil {
		t.Errorf("r2 after SIGTERM: %v (stderr: %s)", err, lastLines(replicas[1].Stderr(), 10))
	}
	time.Sleep(*loadFor / 4)
	killAt := time.Now()
	replicas[2].Kill()
	time.Sleep(*loadFor / 2)
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	perReplica := map[string]int{}
	var failedR2, failedOther []callRecord
	inFlightR2 := 0
	for _, r := range records {
		if r.err == nil {
			perReplica[r.replica]++
		}
		if r.replica == "r2" && r.start.Before(drainAt) && r.end.After(drainAt) {
			inFlightR2++
			if r.err != nil {
				failedR2 = append(failedR2, r)
			}
		}
		// A call may fail only if it was in flight on the killed
		// replica, or was refused by the drained one (503: nothing ran).
		if r.err != nil && r.replica != "r3" && !(r.replica == "r2" && !r.start.Before(drainAt)) {
			failedOther = append(failedOther, r)
		}
		if r.err != nil && r.replica == "r3" && r.start.After(killAt.Add(2*time.Second)) {
			failedOther = append(failedOther, r)
		}
	}
	t.Logf("%d calls, %d retried after a failure; answered per replica %v; r2 had %d calls in flight at SIGTERM and exited %s after it",
		calls.Load(), retried.Load(), perReplica, inFlightR2, drained.Round(time.Millisecond))
	if len(lost) > 0 {
		t.Errorf("lost or misrouted calls: %q", lost)
	}
	if len(failedR2) > 0 {
		t.Errorf("calls in flight on the drained replica failed: %+v", failedR2)
	}
	if len(failedOther) > 0 {
		t.Errorf("calls failed that were not in flight on the killed replica: %+v", failedOther)
	}
	if inFlightR2 == 0 {
		t.Error("the drained replica had no call in flight: the test proved nothing")
	}
	if perReplica["r1"] == 0 {
		t.Errorf("r1 answered nothing: %v", perReplica)
	}
	if !strings.Contains(replicas[1].Stderr(), `"msg":"drained"`) {
		t.Errorf("r2's log does not say it drained: %s", lastLines(replicas[1].Stderr(), 10))
	}
}

func replicaOf(sessionID string) string {
	id, _, _ := strings.Cut(sessionID, ".")
	return id
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
