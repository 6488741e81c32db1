package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lcptools/lcp/internal/conformance/suitecli"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// support is the task support of the fixture's tools.
var support = map[string]mcp.TaskSupport{
	"slow_compute":        mcp.TaskOptional,
	"failing_job":         mcp.TaskRequired,
	"protocol_error_job":  mcp.TaskOptional,
	"confirm_delete":      mcp.TaskOptional,
	"multi_input":         mcp.TaskOptional,
	"test_tool_with_task": mcp.TaskRequired,
}

// intake is the input the fixture's tools gather before their tasks
// start: test_tool_with_task asks for the user's name.
func intake(name string, _ json.RawMessage) sdk.InputRequestMap {
	if name != "test_tool_with_task" {
		return nil
	}
	return sdk.InputRequestMap{"user_name": &sdk.ElicitParams{
		Message:         "What is your name?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name"}},"required":["name"]}`),
	}}
}

// elicitedName is the name field of an accepted elicitation's content.
func elicitedName(r sdk.InputResponse) any {
	if e, ok := r.(*sdk.ElicitResult); ok && e.Action == "accept" {
		return e.Content["name"]
	}
	return nil
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
		// Two questions at once are one AskClient: tool.Ask puts a
		// call's questions one after the other.
		must(native.Func(tool.Info{Name: "multi_input", Description: "Asks two questions at once.", InputSchema: obj(`{"type":"object"}`)},
			func(ctx context.Context, _ map[string]any) (any, error) {
				got, err := mcp.AskClient(ctx, map[string]sdk.InputRequest{
					"first":  &sdk.ElicitParams{Message: "Name 1?", RequestedSchema: nameForm},
					"second": &sdk.ElicitParams{Message: "Name 2?", RequestedSchema: nameForm},
				})
				if err != nil {
					return nil, err
				}
				return fmt.Sprintf("names: %v, %v", elicitedName(got["first"]), elicitedName(got["second"])), nil
			})),
		// Its intake (intake below) gathers the name before the task
		// starts; AskClient then answers from it.
		must(native.Func(tool.Info{Name: "test_tool_with_task", Description: "Asks for a name, then runs as a task.", InputSchema: obj(`{"type":"object"}`)},
			func(ctx context.Context, _ map[string]any) (any, error) {
				got, err := mcp.AskClient(ctx, intake("test_tool_with_task", nil))
				if err != nil {
					return nil, err
				}
				return fmt.Sprintf("Hello, %v: your task is done.", elicitedName(got["user_name"])), nil
			})),
	}
	ts, err := native.New(nil, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Compose(ts, brokenToolset{})
}

// passing are the tasks scenarios lcp passes: each must pass with no
// failure and no warning. The others (see docs/conformance.md) are run
// and their counts logged.
var passing = []string{
	"tasks-lifecycle",
	"tasks-capability-negotiation",
	"tasks-wire-fields",
	"tasks-request-state-removal",
	"tasks-request-headers",
	"tasks-dispatch-and-envelope",
	"tasks-required-task-error",
	"tasks-mrtr-input",
	"tasks-mrtr-composition",
}

// TestTasksScenarios runs the suite's tasks extension scenarios against
// lcp's server with the extension served, and logs their counts; it fails
// when a scenario of passing fails a check, warns or checks nothing, and
// when the suite no longer lists one of them.
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
		Intake:  intake,
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
	for _, sc := range passing {
		if !slices.Contains(scenarios, sc) {
			t.Errorf("the suite no longer lists %s:\n%s", sc, out)
		}
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
			if slices.Contains(passing, sc) && (total == 0 || failed > 0 || warnings > 0 || passed != total) {
				t.Errorf("%s passed before; now %d failed, %d warnings, %d/%d", sc, failed, warnings, passed, total)
			}
			t.Logf("%s: Passed: %d/%d, %d failed, %d warnings\n%s", sc, passed, total, failed, warnings, out)
		})
	}
	t.Logf("tasks extension scenarios, %d of %d with no failure (passed/total checks):\n%s", green, len(scenarios), strings.Join(summary, "\n"))
}
