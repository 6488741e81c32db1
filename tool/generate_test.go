package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

type fixedModel string

func (m fixedModel) GenerateJSON(context.Context, string, json.RawMessage) (string, error) {
	return string(m), nil
}

func TestGenerateUsesTheCallsModel(t *testing.T) {
	ctx := context.Background()
	if _, err := tool.Generate(ctx, "hi", nil); !errors.Is(err, tool.ErrNoModel) {
		t.Errorf("outside a call: %v, want ErrNoModel", err)
	}
	var ts *native.Toolset
	inner, _ := native.Func(tool.Info{Name: "inner", Description: "Asks the model."}, func(ctx context.Context, _ map[string]any) (any, error) {
		return tool.Generate(ctx, "hi", nil)
	})
	outer, _ := native.Func(tool.Info{Name: "outer", Description: "Calls inner."}, func(ctx context.Context, _ map[string]any) (any, error) {
		res, err := tool.Call(ctx, ts, "inner", nil, &tool.CallOptions{Parent: tool.CallFromContext(ctx)})
		if err != nil {
			return nil, err
		}
		return res.Text(), nil
	})
	ts, _ = native.New(nil, inner, outer)
	res, err := tool.Call(ctx, ts, "outer", nil, &tool.CallOptions{Generator: fixedModel("from the caller")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "from the caller" {
		t.Errorf("a nested call got %q, want the parent's model", res.Text())
	}
	res, err = tool.Call(ctx, ts, "inner", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Success {
		t.Errorf("without a model: %+v", res)
	}
}
