package term_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/hitl/term"
	"github.com/lcptools/lcp/tool"
)

// The terminal front end behind a broker. Here its answers come from a
// pipe, so that the example runs anywhere; lcp passes the terminal
// (os.Stdin when it is one) and os.Stderr.
func ExampleNew() {
	answers, typist, _ := os.Pipe()
	typist.WriteString("2\n")
	typist.Close()

	var screen strings.Builder
	t := term.New(answers, &screen)
	defer t.Close()
	broker := hitl.New(t, nil)
	defer broker.Close()

	resp := broker.Respond(context.Background(), &tool.Request{
		Kind: tool.KindSelect, Tool: "tool_prepare_deployment", Library: "user_interaction_demo",
		Title: "Deployment strategy for production", Prompt: "Choose how the service should be rolled out:",
		Options: []string{"blue-green", "rolling", "canary"}, Default: ptrTo("canary"),
	})
	fmt.Println(strings.TrimRight(screen.String(), " "))
	fmt.Println("answer:", *hitl.InteractionReply(resp))
	// Output:
	// ────────────────────────────────────────────────────────────
	// Deployment strategy for production
	// (tool tool_prepare_deployment, library user_interaction_demo)
	// ────────────────────────────────────────────────────────────
	// Choose how the service should be rolled out:
	//   1. blue-green
	//   2. rolling
	//   3. canary (default)
	// Choose 1-3 (Enter for 3):
	// answer: rolling
}

func ptrTo(s string) *string { return &s }
