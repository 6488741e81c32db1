#!/usr/bin/env bash
# MCP serving over streamable HTTP: `lcp mcp --http` with a trivial Python
# tool against the official TypeScript SDK's server with the same tool, the
# same Node client (the SDK's) driving both: SESSIONS sessions x CALLS calls.
# Rounds alternate between the servers; it prints, per server, the medians of
# calls/s, p50/p99 latency and the server's CPU time per 1,000 calls (the
# process and its descendants: for lcp, the Python worker too; "own" is the
# server process alone), and the CPU ratio against the first server.
#
#   bench/mcpserve/run.sh                      # ts against lcp, 5 rounds
#   bench/mcpserve/run.sh gosdk golcp          # a native Go tool: the bare Go SDK against lcp
#   bench/mcpserve/run.sh -rounds 7 ts lcp 'stateless::--stateless' 'gogc100:GOGC=100:'
#   bench/mcpserve/run.sh ts lcp 'before:::/tmp/lcp-before'   # an earlier build in the same run
#
# A variant is ts, lcp, gosdk (the Go SDK's server with tool_echo in Go),
# golcp (the same Go tool as a native lcp tool served by mcp.NewServer;
# both from bench/mcpserve/goserver), or NAME:ENV=V[,ENV=V...]:LCP-FLAGS[:LCP-BINARY]
# (lcp with that environment and those flags; the binary built from this
# tree unless another is named). WIRE=REV in ENV is not passed to lcp: it
# drives that variant with the Go SDK's client (goload) at revision REV
# instead of the TypeScript client, e.g. the 2026-07-28 wire against the
# 2025-11-25 one:
#
#   bench/mcpserve/run.sh -rounds 1 'w25:WIRE=2025-11-25:' 'w26:WIRE=2026-07-28:'

# Needs node and the npm peers of package mcp (cd mcp/testdata/node && npm ci).
set -eu
rounds=5 sessions=4 calls=500
while [ $# -gt 0 ]; do
  case $1 in
    -rounds) rounds=$2; shift 2 ;;
    -sessions) sessions=$2; shift 2 ;;
    -calls) calls=$2; shift 2 ;;
    *) break ;;
  esac
done
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(ts lcp)
repo=$(pwd)
here=$repo/bench/mcpserve
export LCP_NODE_MODULES=$repo/mcp/testdata/node/node_modules
[ -d "$LCP_NODE_MODULES/@modelcontextprotocol/sdk" ] || { echo "run (cd mcp/testdata/node && npm ci) first" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tools"
cat > "$tmp/tools/echo.py" <<'PY'
def tool_echo(x: int = 0) -> dict:
    """Returns its argument.

    Args:
        x (int): Any integer.
    """
    return {"success": True, "output": str(x)}
PY
go build -o "$tmp/lcp" ./cmd/lcp
go build -o "$tmp/goserver" ./bench/mcpserve/goserver
go build -o "$tmp/goload" ./bench/mcpserve/goload

tree() { echo "$1"; for c in $(pgrep -P "$1" || true); do tree "$c"; done; }
ticks() { local t=0; for p in "$@"; do [ -r "/proc/$p/stat" ] && t=$((t + $(sed 's/.*) //' "/proc/$p/stat" | awk '{print $12+$13}'))); done; echo $t; }
hz=$(getconf CLK_TCK)
port=24100
one() { # variant -> "calls_per_s p50 p99 cpu_ms_per_1000 own_ms_per_1000"
  local v=$1 name envs flags bin pid wire=""
  port=$((port + 1))
  case $v in
    ts) node "$here/ts_server.mjs" $port >/dev/null 2>&1 & pid=$! ;;
    golcp) "$tmp/goserver" lcp $port >/dev/null 2>&1 & pid=$! ;;
    gosdk) "$tmp/goserver" sdk $port >/dev/null 2>&1 & pid=$! ;;
    lcp) "$tmp/lcp" mcp --tools "$tmp/tools" --http 127.0.0.1:$port --no-token >/dev/null 2>&1 & pid=$! ;;
    *) IFS=: read -r name envs flags bin <<<"$v"
       wire=$(tr ',' '\n' <<<"$envs" | sed -n 's/^WIRE=//p')
       envs=$(tr ',' '\n' <<<"$envs" | grep -v '^WIRE=' | paste -sd, || true)
       env $(tr ',' ' ' <<<"$envs") "${bin:-$tmp/lcp}" mcp --tools "$tmp/tools" --http 127.0.0.1:$port --no-token $flags >/dev/null 2>&1 & pid=$! ;;
  esac
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break; sleep 0.1; done
  load() { if [ -n "$wire" ]; then "$tmp/goload" "$1" tool_echo "$wire" "$2" "$3"; else node "$here/load.mjs" "$1" tool_echo "$2" "$3"; fi; }
  load "http://127.0.0.1:$port/mcp" "$sessions" 50 >/dev/null
  local procs; procs=$(tree $pid)
  local c0 o0 out c1 o1
  c0=$(ticks $procs); o0=$(ticks $pid)
  out=$(load "http://127.0.0.1:$port/mcp" "$sessions" "$calls")
  procs=$(tree $pid)
  c1=$(ticks $procs); o1=$(ticks $pid)
  kill $pid; wait $pid 2>/dev/null || true
  local n=$((sessions * calls))
  node -e '
    const r = JSON.parse(process.argv[1]); const [n, hz, c, o] = process.argv.slice(2).map(Number);
    console.log(r.calls_per_s, r.p50_ms, r.p99_ms, (c * 1000 / hz) * 1000 / n, (o * 1000 / hz) * 1000 / n);
  ' "$out" $n $hz $((c1 - c0)) $((o1 - o0))
}
declare -A res
for r in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    line=$(one "$v")
    res[$v]+="$line;"
    echo "round $r ${v%%:*}: $line (calls/s p50 p99 cpu/1000 own/1000)" >&2
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
ref=
for v in "${variants[@]}"; do
  node -e '
    const rows = process.argv[1].split(";").filter(Boolean).map((l) => l.split(" ").map(Number));
    const med = (i) => { const s = rows.map((r) => r[i]).sort((a, b) => a - b); return s[s.length >> 1]; };
    const ref = process.argv[3] ? Number(process.argv[3]) : 0;
    const cpu = med(3);
    const ratio = ref ? ` (${(ref / cpu).toFixed(2)}x less CPU than ${process.argv[4]})` : "";
    console.log(`${process.argv[2].padEnd(12)} ${med(0).toFixed(0).padStart(6)} calls/s  p50 ${med(1).toFixed(2)} ms  p99 ${med(2).toFixed(2)} ms  cpu ${cpu.toFixed(0)} ms/1000 calls (own ${med(4).toFixed(0)})${ratio}`);
  ' "${res[$v]}" "${v%%:*}" "$ref" "${variants[0]%%:*}"
  if [ -z "$ref" ]; then
    ref=$(node -e 'const rows = process.argv[1].split(";").filter(Boolean).map((l) => Number(l.split(" ")[3])).sort((a, b) => a - b); console.log(rows[rows.length >> 1])' "${res[$v]}")
  fi
done
