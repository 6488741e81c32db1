// Command goload is the Go load client of bench/mcpserve: the official Go
// SDK's client over streamable HTTP at a chosen protocol revision, so
// that the same server is measured on the 2025-11-25 wire (sessions) and
// the 2026-07-28 wire (stateless, _meta in every request). SESSIONS
// clients each make CALLS calls of TOOL one after the other, after 50
// warm-up calls each; it prints one JSON line as load.mjs does.
//
//	go run ./bench/mcpserve/goload URL TOOL VERSION SESSIONS CALLS
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: goload URL TOOL VERSION SESSIONS CALLS")
		os.Exit(2)
	}
	url, name, version := os.Args[1], os.Args[2], os.Args[3]
	sessions, _ := strconv.Atoi(os.Args[4])
	calls, _ := strconv.Atoi(os.Args[5])
	if err := run(url, name, version, sessions, calls); err != nil {
		fmt.Fprintln(os.Stderr, "goload:", err)
		os.Exit(1)
	}
}

func run(url, name, version string, sessions, calls int) error {
	ctx := context.Background()
	call := func(cs *sdk.ClientSession, k int) error {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{"x": k}})
		if err != nil {
			return err
		}
		if t, ok := r.Content[0].(*sdk.TextContent); r.IsError || !ok || t.Text != strconv.Itoa(k) {
			return fmt.Errorf("unexpected result %+v", r)
		}
		return nil
	}
	clients := make([]*sdk.ClientSession, sessions)
	for i := range clients {
		c := sdk.NewClient(&sdk.Implementation{Name: fmt.Sprintf("load-%d", i), Version: "1.0.0"}, nil)
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			return err
		}
		defer cs.Close()
		for k := range 50 {
			if err := call(cs, k); err != nil {
				return err
			}
		}
		clients[i] = cs
	}
	var (
		mu   sync.Mutex
		lat  []float64
		errs []error
		wg   sync.WaitGroup
	)
	t0 := time.Now()
	for _, cs := range clients {
		wg.Go(func() {
			for k := range calls {
				t := time.Now()
				err := call(cs, k)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				lat = append(lat, float64(time.Since(t).Microseconds())/1000)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	secs := time.Since(t0).Seconds()
	slices.Sort(lat)
	b, _ := json.Marshal(map[string]any{
		"calls_per_s": float64(int(float64(len(lat))/secs*10)) / 10,
		"p50_ms":      lat[len(lat)/2],
		"p99_ms":      lat[len(lat)*99/100],
		"calls":       len(lat),
	})
	fmt.Println(string(b))
	return nil
}
