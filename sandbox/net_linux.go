package sandbox

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The network of a run with an egress proxy: the run keeps its own
// network namespace, where the init listens on the loopback; every
// connection it accepts is handed, as a descriptor (SCM_RIGHTS), to lcp
// over a socket pair made before the run started, and served there by
// Policy.Egress. Nothing inside the run can reach that socket: the init
// holds it close-on-exec, and no path names it.

// egressPair returns lcp's and the init's ends of the hand-over socket.
func egressPair() (ours, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("egress socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "egress"), os.NewFile(uintptr(fds[1]), "egress-init"), nil
}

// proxyEnv points the proxy variables of env at the egress proxy, and
// keeps the loopback of the run direct.
func proxyEnv(env []string, port int) []string {
	out := make([]string, 0, len(env)+6)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(k) {
		case "http_proxy", "https_proxy", "no_proxy", "all_proxy":
			continue
		}
		out = append(out, kv)
	}
	proxy := "http://127.0.0.1:" + strconv.Itoa(port)
	direct := "localhost,127.0.0.1,::1"
	return append(out, "HTTP_PROXY="+proxy, "HTTPS_PROXY="+proxy, "http_proxy="+proxy, "https_proxy="+proxy,
		"NO_PROXY="+direct, "no_proxy="+direct)
}

// serveEgress takes over lcp's end of the hand-over socket and, in the
// background, gives each connection the init hands over to the policy's
// Egress, until the init closes its end: the run is gone.
func (b *Box) serveEgress(f *os.File) {
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return
	}
	go func() {
		defer uc.Close()
		buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*8))
		for {
			_, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
			if err != nil {
				return
			}
			for _, fd := range receivedFds(oob[:oobn]) {
				cf := os.NewFile(uintptr(fd), "egress-conn")
				conn, err := net.FileConn(cf)
				cf.Close()
				if err != nil {
					continue
				}
				go b.policy.Egress(conn)
			}
		}
	}()
}

func receivedFds(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err == nil {
			out = append(out, fds...)
		}
	}
	return out
}
