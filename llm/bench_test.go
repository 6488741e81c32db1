package llm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lcptools/lcp/llm"
	"github.com/lcptools/lcp/llm/llmtest"
)

// BenchmarkReadStream parses a stream of 1000 text chunks, as a long
// answer arrives.
func BenchmarkReadStream(b *testing.B) {
	var sb strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&sb, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%d \"}}]}\n\n", i)
	}
	sb.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	stream := sb.String()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		if _, err := llm.ReadStream(strings.NewReader(stream), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChat measures one request over loopback HTTP to the scripted
// server: the client's share of a model request.
func BenchmarkChat(b *testing.B) {
	srv := llmtest.New(b)
	c := srv.Client()
	req := &llm.ChatRequest{Messages: []llm.Message{llm.User("hi")}}
	for b.Loop() {
		srv.Add(llmtest.Text("hello"))
		if _, err := c.Chat(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
