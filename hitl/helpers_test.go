package hitl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

func ptr[T any](v T) *T { return &v }

// confirmReq returns a confirmation as a tool of library lib would ask it.
func confirmReq(lib, label string) *tool.Request {
	return &tool.Request{ID: tool.NewID(), Tool: "tool_x", Library: lib, Kind: tool.KindConfirm,
		Source: "rm -rf build/", Label: label, Title: label}
}

// recorder is a front end that answers with answer and remembers what it
// was asked; a nil answer blocks until the request is withdrawn.
type recorder struct {
	mu     sync.Mutex
	asked  []*tool.Request
	causes []error
	answer func(r *tool.Request) tool.Response
	shown  chan *tool.Request // receives each request when set
	gone   chan error         // receives the cause of each withdrawal when set
}

func (f *recorder) Ask(ctx context.Context, r *tool.Request) (tool.Response, error) {
	f.mu.Lock()
	f.asked = append(f.asked, r)
	f.mu.Unlock()
	if f.shown != nil {
		f.shown <- r
	}
	if f.answer != nil {
		return f.answer(r), nil
	}
	<-ctx.Done()
	f.mu.Lock()
	f.causes = append(f.causes, context.Cause(ctx))
	f.mu.Unlock()
	if f.gone != nil {
		f.gone <- context.Cause(ctx)
	}
	return tool.Response{}, context.Cause(ctx)
}

func (f *recorder) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

func (f *recorder) cause(i int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.causes) {
		return nil
	}
	return f.causes[i]
}

// capture collects everything a broker emits: log records (at every
// level) and events, as text, for grepping.
type capture struct {
	mu   sync.Mutex
	logs bytes.Buffer
	evs  bytes.Buffer
	wg   sync.WaitGroup
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logs.Write(p)
}

// newCaptured returns a broker whose logs and events go to a capture.
func newCaptured(t *testing.T, fe hitl.FrontEnd, opts *hitl.Options) (*hitl.Broker, *capture) {
	t.Helper()
	c := &capture{}
	if opts == nil {
		opts = &hitl.Options{}
	}
	opts.Logger = slog.New(slog.NewJSONHandler(c, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := hitl.New(fe, opts)
	sub := b.Subscribe(1024)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for ev := range sub.Events() {
			data, err := json.Marshal(ev)
			if err != nil {
				panic(err)
			}
			c.mu.Lock()
			c.evs.Write(append(data, '\n'))
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() { b.Close() })
	return b, c
}

// all closes the broker and returns every byte it emitted.
func (c *capture) all(b *hitl.Broker) string {
	b.Close()
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logs.String() + c.evs.String()
}

// events closes the broker and returns the events it published.
func (c *capture) events(t *testing.T, b *hitl.Broker) []hitl.Event {
	t.Helper()
	b.Close()
	c.wg.Wait()
	var out []hitl.Event
	for _, line := range strings.Split(strings.TrimSpace(c.evs.String()), "\n") {
		if line == "" {
			continue
		}
		var ev hitl.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %s: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// types lists the types of events, in order.
func types(evs []hitl.Event) []hitl.EventType {
	var out []hitl.EventType
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// prepareDeployment is the seeds' worked example (seed 003 §4) as a native
// tool: a confirmation for production, then a select, a secret and a text.
func prepareDeployment(t *testing.T) tool.Toolset {
	t.Helper()
	info := tool.Info{Name: "tool_prepare_deployment", Interactions: tool.AllInteractions,
		Library: tool.Library{ID: "user_interaction_demo"}}
	tl, err := native.Func(info, func(ctx context.Context, args map[string]any) (any, error) {
		target, _ := args["target"].(string)
		if target == "" {
			target = "production"
		}
		if target == "production" {
			d, reason, err := tool.Confirm(ctx, "prepare_deployment(action=deploy, target="+target+")", "deploy:"+target, nil)
			if err != nil {
				return nil, err
			}
			if d == tool.Reject {
				return map[string]any{"success": false, "error": "Operator refused production access: " + reason}, nil
			}
		}
		strategy, err := tool.AskSelect(ctx, "Deployment strategy for "+target, "Choose how the service should be rolled out:",
			[]string{"blue-green", "rolling", "canary"}, "canary")
		if declined(err) {
			return map[string]any{"success": false, "error": "Cancelled by user (strategy selection)."}, nil
		} else if err != nil {
			return nil, err
		}
		key, err := tool.AskSecret(ctx, "Registry credentials", "Enter the API key for the '"+target+"' registry:")
		if declined(err) {
			return map[string]any{"success": false, "error": "Cancelled by user (registry API key is required)."}, nil
		} else if err != nil {
			return nil, err
		}
		tag, err := tool.AskText(ctx, "Image tag", "Which image tag should be deployed?", false)
		if declined(err) {
			return map[string]any{"success": false, "error": "Cancelled by user (image tag)."}, nil
		} else if err != nil {
			return nil, err
		}
		return map[string]any{"success": true, "strategy": strategy, "image_tag": tag,
			"output": fmt.Sprintf("Deployment prepared (strategy: %s, tag: %s, key: %s).", strategy, tag, tool.Mask(key)),
			"key_ok": strings.HasPrefix(key, "sk-")}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := native.New(nil, tl)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func declined(err error) bool {
	var d *tool.InteractionDeclinedError
	return errors.As(err, &d)
}
