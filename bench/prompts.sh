#!/usr/bin/env bash
# Spec building for 500 LCP tools, 20 of them with a tool_<name>_prompt
# function: static specs (no Python) against dynamic ones (prompt functions
# run in warm workers), and a cold build (discovery plus the first load of
# the libraries), in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench 'BenchmarkSpecs' -benchtime "${BENCHTIME:-30x}" ./binding)
echo "$out" | grep -E '^Benchmark'
echo "$out" | awk '
  /^BenchmarkSpecsStatic/       { s = $3 }
  /^BenchmarkSpecsDynamicWarm/  { w = $3 }
  /^BenchmarkSpecsDynamicCold/  { c = $3 }
  END {
    if (s == 0) { print "no results"; exit 1 }
    printf "static: %.2f ms, dynamic warm: %.2f ms (%.1fx static), dynamic cold: %.0f ms\n", s/1e6, w/1e6, w/s, c/1e6
  }'
