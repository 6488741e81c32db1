package metrics

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ is 100
// on every Linux architecture Go supports (Prometheus' client assumes the
// same).
const userHZ = 100

// registerProcess adds the process's metrics under the names Prometheus'
// process collector gives them, read from /proc/self when scraped.
func (r *registry) registerProcess() {
	var st procStat // shared by the families of one scrape
	r.prepare = append(r.prepare, func() { st = readProcStat() })
	add := func(name, help string, k kind, v func() (float64, bool)) {
		f := newFamily(name, help, k)
		f.collect = func(emit func(sample)) {
			if x, ok := v(); ok {
				emit(sample{value: x})
			}
		}
		r.register(f)
	}
	add("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", counterKind,
		func() (float64, bool) { return float64(st.utime+st.stime) / userHZ, st.ok })
	add("process_virtual_memory_bytes", "Virtual memory size in bytes.", gaugeKind,
		func() (float64, bool) { return float64(st.vsize), st.ok })
	add("process_resident_memory_bytes", "Resident memory size in bytes.", gaugeKind,
		func() (float64, bool) { return float64(st.rss * int64(os.Getpagesize())), st.ok })
	add("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", gaugeKind,
		func() (float64, bool) {
			boot, ok := bootTime()
			return boot + float64(st.starttime)/userHZ, st.ok && ok
		})
	add("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", gaugeKind, func() (float64, bool) {
		var lim syscall.Rlimit
		if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) != nil {
			return 0, false
		}
		return float64(lim.Cur), true
	})
	add("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", counterKind,
		func() (float64, bool) { in, _, ok := netOctets(); return in, ok })
	add("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", counterKind,
		func() (float64, bool) { _, out, ok := netOctets(); return out, ok })
	add("process_open_fds", "Number of open file descriptors.", gaugeKind, func() (float64, bool) {
		ents, err := os.ReadDir("/proc/self/fd")
		return float64(len(ents)), err == nil
	})
	add("process_max_fds", "Maximum number of open file descriptors.", gaugeKind, func() (float64, bool) {
		var lim syscall.Rlimit
		if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
			return 0, false
		}
		return float64(lim.Cur), true
	})
}

// procStat holds the fields of /proc/self/stat the metrics use.
type procStat struct {
	ok               bool
	utime, stime     uint64
	starttime, vsize uint64
	rss              int64
}

func readProcStat() procStat {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}
	}
	// The command name is in parentheses and may hold spaces: the fields
	// that follow start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): utime is field 14, stime 15, starttime 22,
	// vsize 23, rss 24.
	if len(f) < 22 {
		return procStat{}
	}
	u := func(k int) uint64 { v, _ := strconv.ParseUint(f[k-3], 10, 64); return v }
	rss, _ := strconv.ParseInt(f[24-3], 10, 64)
	return procStat{ok: true, utime: u(14), stime: u(15), starttime: u(22), vsize: u(23), rss: rss}
}

// bootTime is the boot time of the machine in seconds since the epoch
// (btime of /proc/stat).
func bootTime() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			t, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return t, err == nil
		}
	}
	return 0, false
}

// netOctets reads the bytes received and sent over IP in the process's
// network namespace (InOctets and OutOctets of /proc/self/net/netstat, as
// Prometheus' process collector does).
func netOctets() (in, out float64, ok bool) {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	var names []string
	for line := range strings.Lines(string(b)) {
		rest, found := strings.CutPrefix(line, "IpExt:")
		if !found {
			continue
		}
		f := strings.Fields(rest)
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if i >= len(f) {
				break
			}
			v, err := strconv.ParseFloat(f[i], 64)
			switch {
			case err != nil:
			case n == "InOctets":
				in, ok = v, true
			case n == "OutOctets":
				out = v
			}
		}
		break
	}
	return in, out, ok
}
