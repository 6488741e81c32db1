#!/usr/bin/env bash
# Native tool call cost: a trivial typed tool called through tool.Call
# (handler, schema validation of input and output, normalization) against
# the same function called directly with encoding/json, in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench 'BenchmarkTypedCall$|BenchmarkDirectReference$' -benchmem -count "${COUNT:-5}" ./native)
echo "$out" | grep -E '^Benchmark'
echo "$out" | awk '
  /^BenchmarkTypedCall/       { t += $3; ta += $7; tn++ }
  /^BenchmarkDirectReference/ { d += $3; da += $7; dn++ }
  END {
    if (tn == 0 || dn == 0) { print "no results"; exit 1 }
    printf "lcp typed call: %.0f ns/op, %.0f allocs/op\n", t/tn, ta/tn
    printf "direct call:    %.0f ns/op, %.0f allocs/op\n", d/dn, da/dn
    printf "ratio (lcp/direct): %.2fx time\n", (t/tn)/(d/dn)
  }'
