package mcp

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProgressKeepsTotal: through the official Go SDK client, progress a
// tool reports keeps its total, also on a report that repeats the value
// or leaves the total out, and the values MCP needs raised print cleanly
// (1.001, 1.002, 1.003: no 1.0029999999999997).
func TestProgressKeepsTotal(t *testing.T) {
	steps, err := native.Func(tool.Info{Name: "steps", Description: "Reports progress.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ map[string]any) (any, error) {
			tool.ReportProgress(ctx, 1, 4, "first")
			for range 3 {
				tool.ReportProgress(ctx, 1, 4, "still first")
			}
			tool.ReportProgress(ctx, 2, 0, "no total given")
			tool.ReportProgress(ctx, 4, 4, "done")
			return "ok", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := native.New(nil, steps)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			srv := NewServer(ts, nil)
			t.Cleanup(func() { srv.Close() })
			type note struct{ progress, total float64 }
			var mu sync.Mutex
			var got []note
			cs := goClient(t, tr.connect(t, srv), "", nil, nil, func(r *sdk.ProgressNotificationClientRequest) {
				mu.Lock()
				got = append(got, note{r.Params.Progress, r.Params.Total})
				mu.Unlock()
			})
			p := &sdk.CallToolParams{Name: "steps", Arguments: map[string]any{}}
			p.SetProgressToken("tok-steps")
			res, err := cs.CallTool(context.Background(), p)
			if err != nil || res.IsError {
				t.Fatalf("steps: %+v, %v", res, err)
			}
			eventually(func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= 6 })
			mu.Lock()
			defer mu.Unlock()
			want := []note{{1, 4}, {1.001, 4}, {1.002, 4}, {1.003, 4}, {2, 4}, {4, 4}}
			if len(got) != len(want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("notification %d: %v of %v, want %v of %v", i, got[i].progress, got[i].total, want[i].progress, want[i].total)
				}
				if s := strconv.FormatFloat(got[i].progress, 'f', -1, 64); len(s) > 5 {
					t.Errorf("notification %d: progress %s", i, s)
				}
			}
		})
	}
}
