"""In-process reference for bench/worker: the same calls without a worker.

It imports the tool module once (as the worker does) and runs SPEC.md §7's
steps in this process: lookup, hidden-name removal, defaults, filtering and
injection (lcp_worker.CallPlan), the call, JSON conversion
(lcp_worker.to_json) and normalization. Prints one JSON object of figures.

usage: ref.py WORKER_DIR LIB_PATH, then lines on stdin:
  latency N   N sequential calls of tool_echo: {"latency_us": [...]}
  cpu N       N rounds of two concurrent tool_cpu calls (threads): {"wall_s": s}
"""

import importlib.util
import json
import os
import sys
import threading
import time

sys.path.insert(0, sys.argv[1])
import lcp_worker  # noqa: E402

HIDDEN = {"tool_context", "lollms_client_instance", "discussion_instance",
          "user_interaction_handler", "args", "kwargs"}
SCHEMAS = {"tool_echo": {"x": 0}, "tool_cpu": {"n": 3000000}}  # defaults
META = {"success", "status", "status_code", "error", "traceback", "return_code", "prompt_injection"}

spec = importlib.util.spec_from_file_location(
    lcp_worker.MODULE_PREFIX + "bench_tools", sys.argv[2])
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
plans = {}


def normalize(v):
    if not isinstance(v, dict):
        return {"success": True, "status_code": 200, "output": v}
    st = v.get("status")
    rc = v.get("return_code")
    failed = (v.get("success") is False
              or (isinstance(st, str) and st.strip().lower() in ("error", "failure", "failed"))
              or ("return_code" in v and rc is not None and not (type(rc) in (int, float) and rc == 0))
              or (bool(v.get("error")) and v.get("success") is not True))
    out = dict(v)
    if "output" not in v:
        for k in ("result", "data", "response", "papers", "content", "text"):
            if k in v:
                out["output"] = v[k]
                break
        else:
            out["output"] = {k: x for k, x in v.items() if k not in META}
    out["success"] = not failed
    out["status_code"] = 500 if failed else 200
    if failed:
        out["error"] = v.get("error") or "Tool reported failure"
    return out


def execute_tool(name, params, context=None):
    if name not in SCHEMAS:
        return {"success": False, "status_code": 404, "error": "Tool '%s' not found." % name}
    args = {k: v for k, v in params.items() if k not in HIDDEN}
    for k, d in SCHEMAS[name].items():
        args.setdefault(k, d)
    fn = getattr(module, name)
    plan = plans.get(name)
    if plan is None:
        plan = plans[name] = lcp_worker.CallPlan(fn)
    pos, kw = plan.bind(args, lambda n: context if n == "tool_context" else None)
    try:
        value = fn(*pos, **kw)
    except BaseException as e:
        return {"success": False, "status_code": 500, "error": str(e)}
    data, _ = lcp_worker.to_json(value)
    return normalize(json.loads(data))


def main():
    """Serve measurement requests from stdin, one per line, so that the
    benchmark can interleave them with its own under the same load."""
    execute_tool("tool_echo", {"x": 0})
    for line in sys.stdin:
        mode, n = line.split()
        n = int(n)
        if mode == "latency":
            lat = []
            for i in range(n):
                t0 = time.perf_counter()
                execute_tool("tool_echo", {"x": i})
                lat.append((time.perf_counter() - t0) * 1e6)
            out = {"latency_us": lat}
        else:
            t0 = time.perf_counter()
            for _ in range(n):
                ts = [threading.Thread(target=execute_tool, args=("tool_cpu", {})) for _ in range(2)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
            out = {"wall_s": time.perf_counter() - t0}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


main()
