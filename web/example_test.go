package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/web"
)

// ExampleNewServer serves a toolset's page and uses its API as the page
// does: list the tools, start a call, read its result from the state.
func ExampleNewServer() {
	greet, _ := native.Func(tool.Info{Name: "greet", Description: "Greets someone.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
		func(_ context.Context, args map[string]any) (any, error) {
			return "Hello, " + args["name"].(string) + "!", nil
		})
	ts, _ := native.New(nil, greet.InLibrary(tool.Library{ID: "hello", Name: "Hello tools"}))
	defer ts.Close()
	broker := hitl.New(nil, nil) // the page answers the tools' questions
	defer broker.Close()
	srv := web.NewServer(ts, broker, nil)
	defer srv.Close()
	hs := httptest.NewServer(srv) // lcp serve listens on 127.0.0.1:7777
	defer hs.Close()

	send := func(method, path, body string) string {
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		req.Header.Set(web.TokenHeader, srv.Token()) // the page reads it from its <meta>
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	var tools web.ToolsView
	_ = json.Unmarshal([]byte(send("GET", "/api/tools", "")), &tools)
	fmt.Println(tools.Libraries[0].Name, tools.Libraries[0].Tools[0].Name)

	var c web.Call
	_ = json.Unmarshal([]byte(send("POST", "/api/calls", `{"tool":"greet","args":{"name":"Ada"}}`)), &c)
	for c.State != "done" {
		time.Sleep(time.Millisecond)
		for _, x := range srv.State().Calls {
			if x.ID == c.ID {
				c = x
			}
		}
	}
	fmt.Println(string(c.Result))
	// Output:
	// Hello tools greet
	// {"output":"Hello, Ada!","success":true,"status_code":200}
}
