package worker

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkCall measures a warm round trip of a trivial tool.
func BenchmarkCall(b *testing.B) {
	p, _ := testPool(b, nil)
	lib := writeLib(b, "bench", "def tool_echo(x: int = 0):\n    return {'success': True, 'output': x}\n")
	ws := b.TempDir()
	req := &Request{Workspace: ws, Library: lib, Function: "tool_echo", Args: json.RawMessage(`{"x": 1}`)}
	mustCall(b, p, ws, lib, "tool_echo", `{"x": 1}`)
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Call(context.Background(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallParallel measures concurrent calls to one worker.
func BenchmarkCallParallel(b *testing.B) {
	p, _ := testPool(b, nil)
	lib := writeLib(b, "bench", "def tool_echo(x: int = 0):\n    return {'success': True, 'output': x}\n")
	ws := b.TempDir()
	req := &Request{Workspace: ws, Library: lib, Function: "tool_echo", Args: json.RawMessage(`{"x": 1}`)}
	mustCall(b, p, ws, lib, "tool_echo", `{"x": 1}`)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Call(context.Background(), req, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
