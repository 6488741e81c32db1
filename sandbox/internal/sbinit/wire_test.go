package sbinit

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// fullConfig has every field set, none to its zero value (checked by
// TestWireCoversEveryField): a field added to Config but not to Encode
// and DecodeConfig fails the round trip.
func fullConfig() Config {
	return Config{
		Path: "/bin/sh", Args: []string{"sh", "-c", "echo 'a\tb'\n"}, Dir: "/work/ws", Env: []string{"PATH=/bin", "É=ü"},
		Passthrough: 2, Status: 6,
		Mounts: []Mount{
			{Kind: MountOverlay, Dst: "/work/ws", Src: "/work/ws", Fd: 9, File: true, ReadOnly: true, Optional: true,
				Size: 1 << 40, Mode: 0o1777, Target: "../tmp", Upper: "/tmp/lcp-sandbox-1", UpperFd: 10, Fallback: true},
			{Kind: MountBind, Dst: "/usr", Src: "/usr", Fd: -1, UpperFd: -1},
		},
		Network: true,
		Limits: Limits{Memory: 2 << 30, Processes: 1024, FileSize: -1, CPUTime: 10 * time.Minute,
			OpenFiles: 4096, TmpSize: 512 << 20},
		Gate: 11, PidsGroup: true, Egress: &Egress{Port: 3128, Fd: 8}, Seccomp: true,
		Layer:    &Layer{Size: 1 << 30, Inodes: 1 << 20, Sock: 12, Refuse: true},
		ReadOnly: []string{"/"}, ReadWrite: []string{"/tmp", "/work/ws"},
	}
}

// TestWireCoversEveryField checks that fullConfig leaves no field at its
// zero value, so that the round trip covers them all.
func TestWireCoversEveryField(t *testing.T) {
	c := fullConfig()
	var check func(path string, v reflect.Value)
	check = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				check(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
			return
		case reflect.Pointer:
			if !v.IsNil() {
				check(path, v.Elem())
				return
			}
		case reflect.Slice:
			if v.Len() > 0 && v.Index(0).Kind() == reflect.Struct {
				check(path+"[0]", v.Index(0))
				return
			}
		}
		if v.IsZero() {
			t.Errorf("fullConfig leaves %s at its zero value", path)
		}
	}
	check("Config", reflect.ValueOf(c))
}

func TestConfigRoundTrip(t *testing.T) {
	empty := Config{Args: []string{}, Mounts: []Mount{}}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"every field", fullConfig()},
		{"zero", Config{}},
		{"empty lists", empty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeConfig(tc.cfg.Encode())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.cfg) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.cfg)
			}
		})
	}
}

// TestDecodeConfigRefuses: every shortened form of a valid configuration,
// a longer one, another format and bad flags are errors, never a
// configuration with fields missing.
func TestDecodeConfigRefuses(t *testing.T) {
	raw := func() []byte { c := fullConfig(); return c.Encode() }
	for n := 0; n < len(raw()); n++ {
		if _, err := DecodeConfig(raw()[:n]); err == nil {
			t.Fatalf("a configuration cut at %d of %d bytes decoded", n, len(raw()))
		}
	}
	badFlag := append([]byte(wireMagic), 0, 2) // Path "", then Args' presence flag 2
	for _, tc := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"trailing bytes", append(raw(), 0), "past its end"},
		{"json", []byte(`{"path":"/bin/sh"}`), "not in the init's format"},
		{"bad flag", badFlag, "where a flag belongs"},
		{"huge list", append([]byte(wireMagic), 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f), "truncated"},
		{"overlong number", append([]byte(wireMagic), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeConfig(tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

func TestStatusLine(t *testing.T) {
	for _, m := range []Status{
		{Type: "ready"},
		{Type: "error", Step: "mount", Err: "overlay:\tno\nsuch \"thing\" é"},
		{Type: "exit", Code: 137, Signal: "SIGKILL", PeakProcs: 12, MaxRSS: 1 << 40},
		{Type: "exit", Code: -1},
	} {
		line := m.Line()
		if strings.Count(string(line), "\n") != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("%+v: not one line: %q", m, line)
		}
		got, err := ParseStatus(strings.TrimSuffix(string(line), "\n"))
		if err != nil || got != m {
			t.Fatalf("%+v: parsed %+v, %v", m, got, err)
		}
	}
	for _, bad := range []string{"", "ready", "exit\t\"\"\t\"\"\tx\t\"\"\t0\t0", "exit\tstep\t\"\"\t0\t\"\"\t0\t0"} {
		if m, err := ParseStatus(bad); err == nil {
			t.Errorf("%q parsed as %+v", bad, m)
		}
	}
}
