//go:build linux

package servetest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// NginxPath returns the nginx binary, or an error saying it is missing
// (Debian: apt-get install nginx-light).
func NginxPath() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("nginx is not installed (Debian: apt-get install nginx-light)")
}

// Nginx is an nginx process run as a child, with its own prefix.
type Nginx struct {
	Cmd  *exec.Cmd
	Addr string // where it listens
	dir  string
}

// RenderConfig rewrites the recipe deploy/nginx.conf for this run: its
// listen address becomes listen, and the replicas' addresses
// 127.0.0.1:8801, 8802, ... become replicas (in order). Upstreams of
// replicas beyond len(replicas) are dropped, with their map entries.
func RenderConfig(recipe, listen string, replicas []string) (string, error) {
	out := strings.ReplaceAll(recipe, "listen 127.0.0.1:8800;", "listen "+listen+";")
	if out == recipe {
		return "", errors.New("the recipe has no 'listen 127.0.0.1:8800;'")
	}
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		keep := true
		for i := len(replicas) + 1; i <= 9; i++ {
			if strings.Contains(line, fmt.Sprintf("127.0.0.1:880%d", i)) || strings.Contains(line, fmt.Sprintf(`"~^r%d\.`, i)) {
				keep = false
			}
		}
		if keep {
			lines = append(lines, line)
		}
	}
	out = strings.Join(lines, "\n")
	for i, r := range replicas {
		out = strings.ReplaceAll(out, fmt.Sprintf("127.0.0.1:880%d", i+1), r)
	}
	return out, nil
}

// StartNginx runs nginx in the foreground with its prefix, pid file, logs
// and temporary files in dir, serving the http-context configuration
// conf, and waits until it listens at addr.
func StartNginx(dir, conf, addr string) (*Nginx, error) {
	bin, err := NginxPath()
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "lcp.conf"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	main := fmt.Sprintf(`daemon off;
master_process on;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path %[1]s/tmp/body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
    include %[1]s/lcp.conf;
}
`, dir)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(main), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "logs", "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, _ := os.Create(filepath.Join(dir, "logs", "stderr.log"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	n := &Nginx{Cmd: cmd, Addr: addr, dir: dir}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
				resp.Body.Close()
				return n, nil
			}
		}
	}
	n.Stop()
	b, _ := os.ReadFile(filepath.Join(dir, "logs", "error.log"))
	return nil, fmt.Errorf("nginx did not start:\n%s", b)
}

// Stop stops nginx and its workers.
func (n *Nginx) Stop() {
	_ = syscall.Kill(-n.Cmd.Process.Pid, syscall.SIGKILL)
	_ = n.Cmd.Wait()
}

// ErrorLog returns nginx's error log.
func (n *Nginx) ErrorLog() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "logs", "error.log"))
	return string(b)
}
