#!/usr/bin/env bash
# A Python tool calling an MCP server's tool through MCPBinding (the
# embedded bridge), against the same call through the host's inventory
# (the server configured with --mcp-config), in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench 'BenchmarkMCPBridge' -benchtime "${BENCHTIME:-2000x}" .)
echo "$out" | grep -E '^Benchmark'
echo "$out" | awk '
  /^BenchmarkMCPBridge\/reference/ { r = $3 }
  /^BenchmarkMCPBridge\/bridge/    { c = $3 }
  END {
    if (r == 0 || c == 0) { print "no results"; exit 1 }
    printf "MCP call from Python: %.1f us through MCPBinding, %.1f us through the host inventory (%.2fx)\n", c/1e3, r/1e3, c/r
  }'
