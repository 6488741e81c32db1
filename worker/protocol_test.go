package worker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// protocolLib breaks the worker protocol in every way a tool can: it
// writes into the reply pipe (fd 4) behind the worker's back.
const protocolLib = `
import os, struct, threading, time, zlib

STATE = {"n": 0}

def tool_inc():
    STATE["n"] += 1
    return STATE["n"]

def frame(body, length=None, crc=None):
    return struct.pack(">4sII", b"LCP2", len(body) if length is None else length,
                       zlib.crc32(body) if crc is None else crc) + body

def tool_junk():
    # Binary junk whose first bytes read as a small length: the old
    # protocol waited for the rest forever.
    os.write(4, b"\x00\x00\x10\x00junk")
    return "wrote junk"

def tool_junk_then_hang():
    os.write(4, b"\x00\x00\x10\x00")
    time.sleep(3600)

def tool_short_junk_then_hang():
    os.write(4, b"\x00")
    time.sleep(3600)

def tool_huge_frame():
    os.write(4, struct.pack(">4sII", b"LCP2", 1 << 31, 0))
    time.sleep(3600)

def tool_bad_checksum():
    os.write(4, frame(b'{"type":"diag","level":"info","msg":"x"}', crc=12345))
    return "bad checksum"

def tool_unknown_id():
    os.write(4, frame(b'{"type":"result","id":987654321}\n1'))
    return "unknown id"

def tool_unknown_type():
    os.write(4, frame(b'{"type":"bogus"}'))
    return "unknown type"

def tool_bad_header():
    os.write(4, frame(b'not json'))
    return "bad header"

def tool_close_reply_pipe():
    os.close(4)
    time.sleep(3600)

def tool_junk_later():
    def later():
        time.sleep(0.2)
        os.write(4, b"later junk")
    threading.Thread(target=later).start()
    return "ok"
`

// TestProtocolViolations checks that a worker whose pipe carries anything
// but valid frames is killed at once, whatever the call's time limit
// (there is none here): the call fails with a CrashError naming the
// violation, and the next call gets a fresh worker.
func TestProtocolViolations(t *testing.T) {
	requirePython(t)
	t.Parallel()
	cases := []struct {
		fn   string
		want string // in the crash reason
	}{
		{"tool_junk", "bytes that are not a frame"},
		{"tool_junk_then_hang", `bytes that are not a frame: "\x00\x00\x10\x00"`},
		{"tool_short_junk_then_hang", "bytes that are not a frame"},
		{"tool_huge_frame", "a frame too large (2147483648 bytes"},
		{"tool_bad_checksum", "fails its checksum"},
		{"tool_unknown_id", "a result for call 987654321, which is not in flight"},
		{"tool_unknown_type", `unknown type "bogus"`},
		{"tool_bad_header", "invalid frame header"},
		{"tool_close_reply_pipe", "closed its reply pipe"},
	}
	for _, tc := range cases {
		t.Run(tc.fn, func(t *testing.T) {
			t.Parallel()
			p, _ := testPool(t, nil)
			lib := writeLib(t, "proto", protocolLib)
			ws := t.TempDir()
			wantValue(t, mustCall(t, p, ws, lib, "tool_inc", "{}"), "1")
			start := time.Now()
			_, err := p.Call(context.Background(), &Request{Workspace: ws, Library: lib, Function: tc.fn}, nil)
			var ce *CrashError
			if !errors.As(err, &ce) || ce.Cause != CauseProtocol {
				t.Fatalf("err = %v, want a crash for a protocol violation", err)
			}
			if !strings.Contains(ce.Reason, "broke the worker protocol") || !strings.Contains(ce.Reason, tc.want) {
				t.Errorf("reason %q, want it to name %q", ce.Reason, tc.want)
			}
			if d := time.Since(start); d > time.Minute {
				t.Errorf("the violation took %v to end the call", d)
			}
			r := mustCall(t, p, ws, lib, "tool_inc", "{}")
			wantValue(t, r, "1")
			if !r.StateReset {
				t.Error("the next call does not report a state reset")
			}
		})
	}

	// Junk written while no call is in flight ends the worker too, before
	// the next call comes.
	t.Run("junk between calls", func(t *testing.T) {
		t.Parallel()
		p, tag := testPool(t, nil)
		lib := writeLib(t, "proto", protocolLib)
		ws := t.TempDir()
		wantValue(t, mustCall(t, p, ws, lib, "tool_inc", "{}"), "1")
		wantValue(t, mustCall(t, p, ws, lib, "tool_junk_later", "{}"), `"ok"`)
		waitNoTagged(t, tag, hangAfter)
		r := mustCall(t, p, ws, lib, "tool_inc", "{}")
		wantValue(t, r, "1")
		if !r.StateReset {
			t.Error("the next call does not report a state reset")
		}
	})
}
