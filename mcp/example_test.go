package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"

	"github.com/lcptools/lcp/mcp"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}
type addOut struct {
	Sum int `json:"sum"`
}

// Serve a toolset over streamable HTTP, then use it as a client would:
// its tools come back named "<alias>::<tool>".
func Example() {
	ctx := context.Background()
	add, _ := native.Typed("add", "Adds two integers.", func(ctx context.Context, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	})
	inventory, _ := native.New(nil, add)

	srv := mcp.NewServer(inventory, nil)
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler(nil))
	defer hs.Close()

	remote, err := mcp.NewClientToolset(ctx, []mcp.ServerConfig{{Alias: "calc", URL: hs.URL}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer remote.Close()
	res, err := tool.Call(ctx, remote, "calc::add", json.RawMessage(`{"a":2,"b":3}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text(), string(res.Structured))
	// Output: {"sum":5} {"sum":5}
}

// Desktop assistants' configuration files work as they are.
func ExampleParseConfig() {
	servers, err := mcp.ParseConfig([]byte(`{"mcpServers": {
		"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]},
		"search": {"url": "http://localhost:8000/mcp"}
	}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range servers {
		fmt.Println(s.Alias, s.Type)
	}
	// Output:
	// files stdio
	// search http
}

// A Go host serves a document beside its tools.
func ExampleServer_AddResource() {
	ctx := context.Background()
	inventory, _ := native.New(nil)
	srv := mcp.NewServer(inventory, nil)
	defer srv.Close()
	err := srv.AddResource(mcp.Resource{URI: "notes://todo", Name: "todo", MIMEType: "text/markdown",
		Read: func(ctx context.Context, uri string) ([]tool.Content, error) {
			return []tool.Content{tool.ResourceContent(uri, "text/markdown", "- write the docs")}, nil
		}})
	fmt.Println(err)
	// Subscribed clients hear of a change.
	fmt.Println(srv.ResourceUpdated(ctx, "notes://todo"))
	// Output:
	// <nil>
	// <nil>
}
