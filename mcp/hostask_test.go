//lint:file-ignore SA1019 the test answers sampling and roots as clients of both wires still do (deprecated from 2026-07-28 on, SEP-2577)

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

// stepRecorder is a tool set whose handlers record the requests their
// Steps carry: the kind, and for the host's own requests what they ask.
type stepRecorder struct {
	tool.Toolset
	mu    sync.Mutex
	steps []string
}

func (s *stepRecorder) Handler(ctx context.Context, name string) (tool.Handler, error) {
	h, err := s.Toolset.Handler(ctx, name)
	if err != nil {
		return nil, err
	}
	return &recordingHandler{Handler: h, rec: s}, nil
}

func (s *stepRecorder) record(step tool.Step) {
	if step.Request == nil {
		return
	}
	what := string(step.Request.Kind)
	switch q := step.Request.Host.(type) {
	case *sdk.CreateMessageParams:
		what += " sampling"
	case sdk.InputRequestMap:
		what += " " + keysOf(q)
	}
	s.mu.Lock()
	s.steps = append(s.steps, what)
	s.mu.Unlock()
}

func (s *stepRecorder) taken() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.steps
	s.steps = nil
	return out
}

type recordingHandler struct {
	tool.Handler
	rec *stepRecorder
}

func (h *recordingHandler) Invoke(ctx context.Context, inv tool.Invocation) (tool.Step, error) {
	step, err := h.Handler.Invoke(ctx, inv)
	h.rec.record(step)
	return step, err
}

func (h *recordingHandler) Respond(ctx context.Context, resp tool.Response) (tool.Step, error) {
	step, err := h.Handler.Respond(ctx, resp)
	h.rec.record(step)
	return step, err
}

// hostAskServer serves "survey" (AskClient of three requests) and
// "ask_model" (the call's model: the client's, through sampling), through
// rec. Their tools declare the interactions caps (none: they run inline
// under tool.Drive, and their requests are answered in place, not as
// Steps).
func hostAskServer(t *testing.T, caps tool.Capabilities) (*Server, *stepRecorder) {
	t.Helper()
	noArgs := json.RawMessage(`{"type":"object","properties":{}}`)
	must := func(tl *native.Tool, err error) *native.Tool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	survey := must(native.Func(tool.Info{Name: "survey", Description: "Asks the client three things.", InputSchema: noArgs},
		func(ctx context.Context, _ map[string]any) (any, error) {
			got, err := AskClient(ctx, surveyRequests())
			if err != nil {
				return nil, err
			}
			return surveyText(got)
		}))
	model := must(native.Func(tool.Info{Name: "ask_model", Description: "Asks the call's model.", InputSchema: noArgs},
		func(ctx context.Context, _ map[string]any) (any, error) {
			return tool.Generate(ctx, "Say hello", nil)
		}))
	ts, err := native.New(nil, survey.Interactive(caps), model.Interactive(caps))
	if err != nil {
		t.Fatal(err)
	}
	rec := &stepRecorder{Toolset: ts}
	srv := NewServer(rec, nil)
	t.Cleanup(func() { srv.Close() })
	return srv, rec
}

// TestHostRequestsAreSteps: the client's model and AskClient's requests
// of a call leave its Handler as Steps of the host's own (tool.KindHost),
// carrying the client's requests, on both wires, and the tool gets the
// client's answers through them. On the 2025-11-25 wire a tool that
// declares no interaction runs inline under tool.Drive, which answers
// them in place, with the same outcome; the 2026-07-28 wire steps every
// call's tool.Run from its requests, so they are Steps there for every
// tool.
func TestHostRequestsAreSteps(t *testing.T) {
	for _, tt := range []struct {
		name  string
		caps  tool.Capabilities
		steps [2]string // of survey, of ask_model
	}{
		{"a tool that asks", tool.Capabilities{Text: true}, [2]string{"[host greeting,name,roots]", "[host sampling]"}},
		{"a tool that declares no interaction", tool.Capabilities{}, [2]string{"[]", "[]"}},
	} {
		t.Run(tt.name, func(t *testing.T) { testHostRequests(t, tt.caps, tt.steps) })
	}
}

func testHostRequests(t *testing.T, caps tool.Capabilities, steps [2]string) {
	srv, rec := hostAskServer(t, caps)
	url := serveHTTP(t, srv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	answers := surveyAnswers()
	cases := []struct {
		tool    string
		want    string
		steps   string // on the 2025-11-25 wire
		stepped string // on the 2026-07-28 wire
	}{
		{"survey", "Ada: hello (file:///work)", steps[0], "[host greeting,name,roots]"},
		{"ask_model", "hello", steps[1], "[host sampling]"},
	}

	t.Run("2025-11-25", func(t *testing.T) {
		c := sdk.NewClient(&sdk.Implementation{Name: "old-client", Version: "1"}, &sdk.ClientOptions{
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				return answers["name"].(*sdk.ElicitResult), nil
			},
			CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
				return answers["greeting"].(*sdk.CreateMessageResult), nil
			},
		})
		c.AddRoots(&sdk.Root{URI: "file:///work", Name: "work"})
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		for _, tc := range cases {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); got != tc.want {
				t.Errorf("%s: result %q, want %q", tc.tool, got, tc.want)
			}
			if got := fmt.Sprint(rec.taken()); got != tc.steps {
				t.Errorf("%s: steps %s, want %s", tc.tool, got, tc.steps)
			}
		}
	})

	t.Run("2026-07-28", func(t *testing.T) {
		cs := askingClient(t, url, allCaps)
		for _, tc := range cases {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
			for round := 0; err == nil && res.NeedsInput() && round < 3; round++ {
				got := sdk.InputResponseMap{}
				for k := range res.InputRequests {
					got[k] = answers[k]
					if got[k] == nil { // the model's request, keyed lcp-sampling-N
						got[k] = answers["greeting"]
					}
				}
				res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: map[string]any{}, RequestState: res.RequestState, InputResponses: got})
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); got != tc.want {
				t.Errorf("%s: result %q, want %q", tc.tool, got, tc.want)
			}
			if got, want := fmt.Sprint(rec.taken()), tc.stepped; got != want {
				t.Errorf("%s: steps %s, want %s", tc.tool, got, want)
			}
		}
	})
}
