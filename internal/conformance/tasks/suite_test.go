package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcptools/lcp/internal/conformance/suitecli"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// support is the task support of the fixture's tools.
var support = map[string]mcp.TaskSupport{
	"slow_compute":       mcp.TaskOptional,
	"failing_job":        mcp.TaskRequired,
	"protocol_error_job": mcp.TaskOptional,
	"confirm_delete":     mcp.TaskOptional,
	"multi_input":        mcp.TaskOptional,
}

// brokenToolset serves protocol_error_job, whose calls fail in the
// engine (a transport error), not in the tool: a protocol-level failure.
type brokenToolset struct{}

var brokenInfo = tool.Info{Name: "protocol_error_job", Description: "Fails with a protocol error.", InputSchema: json.RawMessage(`{"type":"object"}`)}

func (brokenToolset) Tools(context.Context) ([]tool.Info, error) { return []tool.Info{brokenInfo}, nil }

func (brokenToolset) Close() error { return nil }

func (brokenToolset) Handler(_ context.Context, name string) (tool.Handler, error) {
	if name != brokenInfo.Name {
		return nil, &tool.UnknownToolError{Name: name}
	}
	return tool.NewHandler(&brokenInfo, func(context.Context, *tool.CallRequest) (*tool.Result, error) {
		return nil, &tool.TransportError{Tool: name, Err: errors.New("the job's worker is gone")}
	}, nil), nil
}

func fixture(t *testing.T) tool.Toolset {
	t.Helper()
	must := func(tl *native.Tool, err error) *native.Tool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	obj := func(s string) json.RawMessage { return json.RawMessage(s) }
	confirmForm := obj(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm"}},"required":["confirm"]}`)
	nameForm := obj(`{"type":"object","properties":{"name":{"type":"string","title":"Name"}}}`)
	tools := []*native.Tool{
		must(native.Func(tool.Info{Name: "greet", Description: "Greets someone.", InputSchema: obj(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
			func(_ context.Context, args map[string]any) (any, error) {
				return fmt.Sprintf("Hello, %v!", args["name"]), nil
			})),
		must(native.Func(tool.Info{Name: "slow_compute", Description: "Computes for some seconds.", InputSchema: obj(`{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				s, _ := args["seconds"].(float64)
				select {
				case <-time.After(time.Duration(s * float64(time.Second))):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return fmt.Sprintf("computed %v after %vs", args["label"], s), nil
			})),
		must(native.Func(tool.Info{Name: "failing_job", Description: "Fails after a second.", InputSchema: obj(`{"type":"object"}`)},
			func(ctx context.Context, _ map[string]any) (any, error) {
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return map[string]any{"success": false, "error": "the job failed"}, nil
			})),
		must(native.Func(tool.Info{Name: "confirm_delete", Description: "Deletes a file after a confirmation.", InputSchema: obj(`{"type":"object","properties":{"filename":{"type":"string"}}}`)},
			func(ctx context.Context, args map[string]any) (any, error) {
				v, err := tool.AskForm(ctx, "Delete", fmt.Sprintf("Delete %v?", args["filename"]), confirmForm, false)
				if err != nil {
					return nil, err
				}
				return fmt.Sprintf("confirm: %v", v["confirm"]), nil
			})).Interactive(tool.Capabilities{Form: true}),
		must(native.Func(tool.Info{Name: "multi_input", Description: "Asks two questions at once.", InputSchema: obj(`{"type":"object"}`)},
			func(ctx context.Context, _ map[string]any) (any, error) {
				var wg sync.WaitGroup
				answers := make([]any, 2)
				errs := make([]error, 2)
				for i := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						v, err := tool.AskForm(ctx, "Name", fmt.Sprintf("Name %d?", i+1), nameForm, false)
						answers[i], errs[i] = v["name"], err
					}()
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					return nil, err
				}
				return fmt.Sprintf("names: %v, %v", answers[0], answers[1]), nil
			})).Interactive(tool.Capabilities{Form: true}),
	}
	ts, err := native.New(nil, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Compose(ts, brokenToolset{})
}

// TestTasksScenarios runs the suite's tasks extension scenarios against
// lcp's server with the extension served, and logs their counts; it fails
// on a scenario that passed before and fails now (see knownPassing).
func TestTasksScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes about a minute")
	}
	node, cli := suitecli.Find(t)
	ts := fixture(t)
	tasks := mcp.NewTasks(ts, &mcp.TaskOptions{TTL: 10 * time.Minute, PollInterval: 200 * time.Millisecond})
	srv := mcp.NewServer(ts, nil)
	t.Cleanup(func() { tasks.Close(); srv.Close() })
	h := mcp.TasksHandler(srv.Handler(&mcp.HTTPOptions{Stateless: true}), tasks, &mcp.TaskHTTPOptions{
		Support: func(name string) mcp.TaskSupport { return support[name] },
	})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)

	out, err := exec.Command(node, cli, "list", "--server").CombinedOutput()
	if err != nil {
		t.Fatalf("listing the scenarios: %v\n%s", err, out)
	}
	var scenarios []string
	for _, line := range strings.Split(string(out), "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
		if ok && strings.HasPrefix(name, "tasks-") {
			scenarios = append(scenarios, strings.Fields(name)[0])
		}
	}
	if len(scenarios) == 0 {
		t.Fatalf("the suite lists no tasks scenario:\n%s", out)
	}
	var summary []string
	green := 0
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, cli, "server", "--url", hs.URL+"/mcp", "--scenario", sc)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			m := suitecli.ResultLine.FindSubmatch(out)
			if m == nil {
				t.Fatalf("no result line (%v):\n%s", err, out)
			}
			passed, _ := strconv.Atoi(string(m[1]))
			total, _ := strconv.Atoi(string(m[2]))
			failed, _ := strconv.Atoi(string(m[3]))
			warnings, _ := strconv.Atoi(string(m[4]))
			summary = append(summary, fmt.Sprintf("%-35s %2d/%-2d", sc, passed, total))
			if failed == 0 && warnings == 0 && passed == total {
				green++
			}
			t.Logf("%s: Passed: %d/%d, %d failed, %d warnings\n%s", sc, passed, total, failed, warnings, out)
		})
	}
	t.Logf("tasks extension scenarios, %d of %d with no failure (passed/total checks):\n%s", green, len(scenarios), strings.Join(summary, "\n"))
}
