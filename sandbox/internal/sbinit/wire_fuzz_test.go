package sbinit

import (
	"reflect"
	"testing"
)

// FuzzDecodeConfig: any input is decoded or refused, never a panic or a
// runaway allocation, and what decodes encodes back to a configuration
// that decodes the same.
func FuzzDecodeConfig(f *testing.F) {
	full := fullConfig()
	f.Add(full.Encode())
	zero := Config{}
	f.Add(zero.Encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := DecodeConfig(raw)
		if err != nil {
			return
		}
		again, err := DecodeConfig(cfg.Encode())
		if err != nil {
			t.Fatalf("a decoded configuration does not decode after encoding: %v", err)
		}
		if !reflect.DeepEqual(again, cfg) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, cfg)
		}
	})
}

// FuzzParseStatus: any status line is parsed or refused, never a panic.
func FuzzParseStatus(f *testing.F) {
	f.Add(string(Status{Type: "exit", Code: 137, Signal: "SIGKILL", PeakProcs: 3}.Line()))
	f.Add(string(Status{Type: "error", Step: "mount", Err: "a\tb"}.Line()))
	f.Add("")
	f.Fuzz(func(t *testing.T, line string) {
		_, _ = ParseStatus(line)
	})
}
