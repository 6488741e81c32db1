package mcp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBodyTimeout: a client that sends its headers and then trickles (or
// withholds) its body gets 408 once HTTPOptions.BodyTimeout has passed,
// and its connection is closed.
func TestBodyTimeout(t *testing.T) {
	srv := NewServer(testInventory(t), nil)
	url := serveHTTP(t, srv, &HTTPOptions{BodyTimeout: 100 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A hang detector, not a timing: the answer is due after 100 ms.
	_ = conn.SetDeadline(time.Now().Add(2 * time.Minute))
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"", strings.TrimPrefix(url, "http://"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
	if !resp.Close {
		t.Error("the connection stays open after a body that did not arrive")
	}
}

// TestBodyTimeoutLiftedForTheAnswer: the body's deadline does not bound
// the time the answer takes.
func TestBodyTimeoutLiftedForTheAnswer(t *testing.T) {
	srv := NewServer(testInventory(t), nil)
	url := serveHTTP(t, srv, &HTTPOptions{BodyTimeout: 50 * time.Millisecond})
	sid := openRawSession(t, url, "2025-11-25")
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	resp := post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":300}}}`, h, false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	b := new(strings.Builder)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	if !strings.Contains(b.String(), "finished") {
		t.Fatalf("no result in %q (%v)", b, sc.Err())
	}
}

// TestDisconnectCancelsTheCall: a client that closes its connection
// while its call runs (without notifications/cancelled) cancels the call,
// which frees its place among the calls in flight.
func TestDisconnectCancelsTheCall(t *testing.T) {
	slowStarted.reset()
	slowCancelled.reset()
	srv := NewServer(testInventory(t), nil)
	url := serveHTTP(t, srv, nil)
	sid := openRawSession(t, url, "2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url,
		strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"held":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	// A client's own value of the internal header changes nothing.
	req.Header.Set(requestHeader, "guess")
	// The answer's headers come with its first event: the request is
	// made aside.
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	slowStarted.wait(t, time.Minute)
	if n := srv.CallsInFlight(); n != 1 {
		t.Fatalf("%d calls in flight, want 1", n)
	}
	cancel() // the connection closes; no cancellation is sent
	<-done
	slowCancelled.wait(t, 2*time.Minute)
	for deadline := time.Now().Add(2 * time.Minute); srv.CallsInFlight() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls in flight after the client left", srv.CallsInFlight())
		}
	}
}
