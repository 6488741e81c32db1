"""The Python worker's own CPU per warm call, for one or more trees.

Runs the worker of each WORKER_DIR (a directory holding lcp_worker.py, e.g.
worker/ of this tree and of an older checkout) in a child process on
pipes, with this script as the engine, and sends it calls of a trivial
tool one at a time with GAP seconds between a reply and the next call, as
a server's clients do. GAP matters: a worker that waits between calls runs
them with cold caches and costs several times what it costs in a loop.
Rounds alternate between the trees. It prints, per tree, the medians of:

  cpu      the worker process's CPU per call (/proc, in clock ticks);
  read     the calls thread's CPU reading a call frame (waking included);
  run      its CPU running the call and sending the result (run_call).

and the ratio of each tree's run median to the first tree's.

usage: python3 bench/worker/percall.py [-n 3000] [-gap 0.002] [-rounds 3] WORKER_DIR...
"""

import argparse
import json
import os
import statistics
import struct
import sys
import tempfile
import time
import zlib

PREFIX = struct.Struct(">4sII")
TOOL = 'def tool_echo(x: int = 0) -> dict:\n    """Returns its argument."""\n    return {"success": True, "output": str(x)}\n'


def frame(body: bytes) -> bytes:
    return PREFIX.pack(b"LCP2", len(body), zlib.crc32(body)) + body


def serve(worker_dir: str, lib: str, fds: tuple, report_fd: int) -> None:
    """The child: a worker on the pipes, its calls thread timed."""
    sys.path.insert(0, worker_dir)
    import lcp_worker as W

    call_r, side_r, reply_w = fds
    cfg = W.WorkerConfig.from_json({"library": {"path": lib}})
    w = W.Worker(cfg, call_fd=call_r, side_fd=side_r, reply_fd=reply_w)
    w.install_process_hooks()
    w.install_streams()
    acc = {"read": 0.0, "run": 0.0, "n": 0}
    clock = time.thread_time
    read = W.FrameReader.read

    def timed_read(self):  # type: ignore[no-untyped-def]
        t = clock()
        msg = read(self)
        acc["read"] += clock() - t
        return msg

    run_call = w.run_call

    def timed_run(call, *rest, **kw):  # type: ignore[no-untyped-def]
        t = clock()
        run_call(call, *rest, **kw)
        acc["run"] += clock() - t
        acc["n"] += 1

    def closed() -> None:
        os.write(report_fd, json.dumps(acc).encode())
        os._exit(0)

    W.FrameReader.read = timed_read
    w.run_call = timed_run
    w._closed = closed
    w.serve()
    os._exit(0)


def one(worker_dir: str, lib: str, n: int, gap: float) -> dict:
    call_r, call_w = os.pipe()
    side_r, side_w = os.pipe()
    reply_r, reply_w = os.pipe()
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in (call_w, side_w, reply_r, rep_r):
            os.close(fd)
        serve(worker_dir, lib, (call_r, side_r, reply_w), rep_w)
    for fd in (call_r, side_r, reply_w, rep_w):
        os.close(fd)
    buf = b""

    def read_frame() -> bytes:
        nonlocal buf
        while True:
            if len(buf) >= PREFIX.size:
                _, size, _ = PREFIX.unpack_from(buf)
                if len(buf) >= PREFIX.size + size:
                    body = buf[PREFIX.size:PREFIX.size + size]
                    buf = buf[PREFIX.size + size:]
                    return body
            chunk = os.read(reply_r, 1 << 16)
            if not chunk:
                raise SystemExit(f"the worker of {worker_dir} stopped")
            buf += chunk

    def ticks() -> int:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    read_frame()  # hello
    os.write(call_w, frame(b'{"type":"load","id":1,"h":[false,false],"ev":[false,false],'
                           b'"args":{},"context":{},"config":{}}'))
    read_frame()
    call = (b'{"type":"call","id":%d,"fn":"tool_echo","h":[false,false],"ev":[false,false],'
            b'"args":{"x":%d},"context":{}}')
    t0 = ticks()
    for i in range(n):
        os.write(call_w, frame(call % (i + 2, i)))
        if b'"success":true' not in read_frame():
            raise SystemExit("unexpected result")
        if gap:
            time.sleep(gap)
    cpu = ticks() - t0
    os.close(call_w)
    acc = json.loads(os.read(rep_r, 1 << 16))
    os.waitpid(pid, 0)
    for fd in (side_w, reply_r, rep_r):
        os.close(fd)
    calls = acc["n"] - 1  # the load is not timed above
    return {"cpu": cpu / os.sysconf("SC_CLK_TCK") / n * 1e6,
            "read": acc["read"] / calls * 1e6, "run": acc["run"] / calls * 1e6}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=3000, help="calls per round")
    ap.add_argument("-gap", type=float, default=0.002, help="seconds between a reply and the next call")
    ap.add_argument("-rounds", type=int, default=3)
    ap.add_argument("dirs", nargs="+", metavar="WORKER_DIR")
    a = ap.parse_args()
    if not os.path.exists("/proc/self/stat"):
        raise SystemExit("needs Linux (/proc)")
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, "echo.py")
        with open(lib, "w") as f:
            f.write(TOOL)
        res: dict = {d: [] for d in a.dirs}
        for r in range(a.rounds):
            for d in a.dirs:
                m = one(d, lib, a.n, a.gap)
                res[d].append(m)
                print(f"round {r + 1} {d}: cpu {m['cpu']:.1f} µs, read {m['read']:.1f} µs, "
                      f"run {m['run']:.1f} µs per call", file=sys.stderr)
    print(f"{a.n} calls x {a.rounds} rounds, {a.gap * 1e3:g} ms apart; load average "
          + " ".join(open("/proc/loadavg").read().split()[:3]))
    ref = None
    for d in a.dirs:
        med = {k: statistics.median(m[k] for m in res[d]) for k in ("cpu", "read", "run")}
        ratio = "" if ref is None else f"  run {med['run'] / ref:.2f}x the first"
        ref = ref or med["run"]
        print(f"{d}: cpu {med['cpu']:.0f} µs  read {med['read']:.1f} µs  run {med['run']:.1f} µs per call{ratio}")


if __name__ == "__main__":
    main()
