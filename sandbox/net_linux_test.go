package sandbox

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/lcptools/lcp/egress"
)

// TestEgressByName runs a program in a sandbox whose only way out is the
// egress proxy: the listener on the host's loopback that the allow-list
// names is reached through the proxy, another listener is refused there,
// neither is reachable directly, and names do not resolve inside.
func TestEgressByName(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	serve := func(name string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, name) }))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	allowed, other := serve("allowed"), serve("other")
	rules, err := egress.ParseRules([]string{allowed})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var denied []egress.Denial
	proxy := egress.New(&egress.Options{Allow: rules, OnDeny: func(d egress.Denial) {
		mu.Lock()
		denied = append(denied, d)
		mu.Unlock()
	}})
	t.Cleanup(func() { proxy.Close() })
	script := `
import os, socket
proxy = os.environ["HTTP_PROXY"].removeprefix("http://")
host, port = proxy.rsplit(":", 1)
def via_proxy(target):
    s = socket.create_connection((host, int(port)), timeout=20)
    s.sendall(("GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (target, target)).encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    return data.split(b"\r\n")[0].decode() + " " + data.rsplit(b"\r\n", 1)[-1].decode()
def direct(target):
    h, p = target.rsplit(":", 1)
    try:
        socket.create_connection((h, int(p)), timeout=5).close()
        return "connected"
    except OSError as e:
        return type(e).__name__
def dns():
    try:
        socket.getaddrinfo("example.org", 443)
        return "resolved"
    except OSError as e:
        return "no-dns"
print("allowed:", via_proxy("ALLOWED"))
print("other:", via_proxy("OTHER"))
print("direct:", direct("ALLOWED"))
print("dns:", dns())
print("no_proxy:", os.environ.get("NO_PROXY"))
`
	script = strings.NewReplacer("ALLOWED", allowed, "OTHER", other).Replace(script)
	ws := t.TempDir()
	r := runPy(t, &Policy{Workspace: ws, Egress: proxy.ServeConn}, script)
	if r.report.SetupErr != nil || r.err != nil {
		t.Fatalf("run: %v %v\n%s", r.report.SetupErr, r.err, r.stderr)
	}
	for _, want := range []string{
		"allowed: HTTP/1.1 200 OK allowed",
		"other: HTTP/1.1 403 Forbidden",
		"direct: ConnectionRefusedError",
		"dns: no-dns",
		"no_proxy: localhost,127.0.0.1,::1",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("missing %q in:\n%s", want, r.stdout)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(denied) != 1 || net.JoinHostPort(denied[0].Host, fmt.Sprint(denied[0].Port)) != other {
		t.Errorf("denials %+v, want one for %s", denied, other)
	}
}

func TestEgressPortChecked(t *testing.T) {
	_, err := checkPolicy(&Policy{Workspace: t.TempDir(), EgressPort: 70000, Egress: func(net.Conn) {}})
	if err == nil || !strings.Contains(err.Error(), "egress port 70000") {
		t.Fatalf("err %v", err)
	}
}

func TestEgressAndNetworkExclusive(t *testing.T) {
	cmd := exec.Command("/bin/true")
	_, err := wrap(cmd, &Policy{Workspace: t.TempDir(), Network: true, Egress: func(net.Conn) {}})
	if err == nil || !strings.Contains(err.Error(), "egress") {
		t.Fatalf("err %v", err)
	}
}

// runPy runs a Python script sandboxed by p.
func runPy(t *testing.T, p *Policy, script string) result {
	t.Helper()
	py, paths := Python("python3")
	p.ReadPaths = append(p.ReadPaths, paths...)
	p.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	return runCmd(t, p, py, "-c", script)
}
