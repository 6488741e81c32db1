// Command goserver serves bench/mcpserve's tool_echo from Go over
// streamable HTTP on 127.0.0.1:PORT/mcp, in one of two ways, so that the
// bench compares lcp's serving layer with the bare Go SDK on the same
// native tool:
//
//	goserver lcp PORT   a native Go tool (package native) served by mcp.NewServer
//	goserver sdk PORT   the same tool on the official Go SDK's server and handler
//
// Both apply the collector settings `lcp mcp` applies (GOGC=400 and a soft
// memory limit unless the environment sets them), so the comparison is of
// the serving code, not of GC policy.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/lcptools/lcp/internal/cli"
	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/native"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoIn is tool_echo's argument, as the Python and TypeScript tools take it.
type echoIn struct {
	X int `json:"x,omitempty" jsonschema:"any integer"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: goserver lcp|sdk PORT")
		os.Exit(2)
	}
	port, err := strconv.Atoi(os.Args[2])
	if err != nil || port <= 0 || port > 65535 {
		fmt.Fprintf(os.Stderr, "goserver: PORT %q is not a port number\n", os.Args[2])
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cli.TuneGC(ctx, os.Getenv)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	switch os.Args[1] {
	case "lcp":
		err = serveLCP(ctx, addr)
	case "sdk":
		err = serveSDK(ctx, addr)
	default:
		err = fmt.Errorf("unknown mode %q (want lcp or sdk)", os.Args[1])
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "goserver:", err)
		os.Exit(1)
	}
}

func serveLCP(ctx context.Context, addr string) error {
	echo, err := native.Typed("tool_echo", "Returns its argument.", func(_ context.Context, in echoIn) (string, error) {
		return strconv.Itoa(in.X), nil
	})
	if err != nil {
		return err
	}
	ts, err := native.New(nil, echo)
	if err != nil {
		return err
	}
	srv := mcp.NewServer(ts, nil)
	defer srv.Close()
	ln, err := mcp.Listen(addr, nil)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, ln, nil)
}

func serveSDK(ctx context.Context, addr string) error {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-reference", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "tool_echo", Description: "Returns its argument."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strconv.Itoa(in.X)}}}, nil, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	hs := &http.Server{Addr: addr, Handler: mux}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	return hs.ListenAndServe()
}
