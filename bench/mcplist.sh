#!/usr/bin/env bash
# An MCP client's second (and later) tools/list on a library with a
# prompt function that takes 1.2 s (its text is cached), against the same
# listing on the library without the prompt function, in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench 'BenchmarkMCPToolsList' -benchtime "${BENCHTIME:-2000x}" .)
echo "$out" | grep -E '^Benchmark'
echo "$out" | awk '
  /^BenchmarkMCPToolsList\/reference/      { r = $3 }
  /^BenchmarkMCPToolsList\/cached_prompts/ { c = $3 }
  END {
    if (r == 0 || c == 0) { print "no results"; exit 1 }
    printf "second tools/list: %.3f ms with the cached prompt, %.3f ms without prompt functions (%.2fx)\n", c/1e6, r/1e6, c/r
  }'
